-- SPDX-License-Identifier: GPL-2.0
-- tests/debsrc/work.lua: Lua's interpreter on its unbalanced paths: errors
-- thrown with longjmp through nested C calls, caught by pcall; coroutines
-- yielding and resuming (longjmp in Lua 5.4's C code); a coroutine that
-- dies of an error; and os.exit() from deep inside calls, which never
-- returns through them.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function thrower(depth)
  if depth == 0 then error({ code = depth }) end
  return thrower(depth - 1) + 1
end

local caught = 0
for i = 1, 300 do
  local ok = pcall(thrower, i % 17)
  if not ok then caught = caught + 1 end
  local ok2 = pcall(string.rep)          -- an error raised in C
  if not ok2 then caught = caught + 1 end
end

local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i * 2) end
  end)
end
local sum = 0
for _ = 1, 50 do
  for v in gen(40) do sum = sum + v end
end

local co = coroutine.create(function(a)
  local b = coroutine.yield(a + 1)
  error("dies with " .. b)
end)
coroutine.resume(co, 1)
coroutine.resume(co, 2)

local t = {}
for i = 1, 3000 do t[i] = (i * 7919) % 1000 end
table.sort(t, function(a, b) return a > b end)
local s = string.rep("abc ", 2000):gsub("b", function(x) return x:upper() end)

print(fib(18), caught, sum, #s, t[1])
local function leave(n) if n == 0 then os.exit(0) end leave(n - 1) end
leave(5)
