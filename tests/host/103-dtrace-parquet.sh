#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --format=parquet: the table DuckDB (a real engine, @duckdb/node-api
# from npm) reads back is dtrace's trace.  Ground truth:
#  1. a ktgen trace with lost records: the row count is the text listing's
#     line count, the lost rows' counts are dtrace -S's, the rows per task
#     (name then and tid) are the listing's lines per task column, the rows
#     per pid the lines dtrace -p lists;
#  2. the three queries of Documentation/trace/ktrace-export.rst, taken
#     from the file and run as written: run time per task equals an awk
#     model of the listing's sched:switch lines (time to the CPU's previous
#     switch, to the task switched out), the system call latencies' counts
#     and maxima (of a mktrace.py trace with unpaired and mismatched calls)
#     equal an awk model pairing each thread's listed entries with its next
#     system call event, an exit of the same call; the slowest calls are
#     --report's maxima;
#  3. a call trace of a program built with -finstrument-functions: one row
#     per call, per function the calls, min, max and average that
#     dtrace --report --format=csv says, null function/depth/duration on
#     every other row; a ktgen trace of kernel and user streams has a row
#     per listed line but the user streams' func events (time, group:event
#     and text the line's; a user event named as its program's maps name
#     it), and per --report call; a full disk is an error naming the file;
#     machine directories: each row's machine is its listed line's first
#     column (null with one machine);
#  4. a second, independent reader, the Rust parquet crate (npm package
#     parquet-wasm, arrow-rs), reads the same rows as DuckDB; each row, in
#     order, has the listing's line's time, group:event and text;
#     what DuckDB's parquet_metadata()/parquet_schema() say of the file:
#     the types, the dictionary encodings, ZSTD, row groups of bounded size
#     with the time range in their statistics; and dtrace's peak RSS stays
#     flat from 200k to 800k events (it writes a row group at a time).
#  5. long, all different function names (a library of 4500 functions
#     with 8 KiB names, 36 MiB of them, each called once: far fewer rows
#     than a row group holds): the function dictionary's bytes close a row
#     group (PQ_GROUP_BYTES, 32 MiB), so there are 2 row groups, each
#     one's function column at most 32 MiB and a name; every call is a row
#     (4500, --report's count); each function read back is the name nm
#     gives its address.
. "$(dirname "$0")/user-common.sh"

EXPORT_RST=$ROOT/Documentation/trace/ktrace-export.rst
NPM_DIR=$ROOT/$O/npm
export NPM_MODULES=$NPM_DIR/node_modules
export DUCKDB_NODE_API=$NPM_MODULES/@duckdb/node-api
NPM_PACKAGES="@duckdb/node-api parquet-wasm apache-arrow"
for m in $NPM_PACKAGES; do
	[ -d "$NPM_MODULES/$m" ] && continue
	command -v npm >/dev/null || skip_all "no npm to install $NPM_PACKAGES with"
	# shellcheck disable=SC2086
	npm install --silent --prefix "$NPM_DIR" $NPM_PACKAGES >"$TMP/npm.log" 2>&1 ||
		skip_all "npm could not install $NPM_PACKAGES: $(tail -n 1 "$TMP/npm.log")"
	break
done

# sql FILE SQL...: the rows DuckDB gives, tab-separated
sql() {
	node "$ROOT/tests/host/parquet-query.js" "$@"
}

# same_rows NAME FILE: DuckDB and the Rust parquet crate read the same rows
same_rows() {
	sql "$2" "SELECT * EXCLUDE (file_row_number) FROM read_parquet('trace.parquet',
		  file_row_number = true) ORDER BY file_row_number" >"$TMP/rows.duckdb" 2>&1
	node "$ROOT/tests/host/parquet-arrow.js" "$2" 2>&1 | tail -n +2 >"$TMP/rows.arrow"
	check "$1: the Rust parquet crate (parquet-wasm) reads the rows DuckDB reads" \
		'[ -s "$TMP/rows.arrow" ] && cmp "$TMP/rows.duckdb" "$TMP/rows.arrow"'
}

# doc_query NAME: the SQL of the code block :name: NAME in ktrace-export.rst,
# without its ';'
doc_query() {
	awk -v name="$1" '
		$0 ~ ":name: " name "$" { on = 1; next }
		on && /^   / { sub(/^   /, ""); print; seen = 1; next }
		on && seen && /^[^ ]/ { exit }' "$EXPORT_RST" | sed 's/;[[:space:]]*$//'
}

# 1. a kernel trace with lost records
gen k -s 7 -c 3 -n 3000 -l 3
"$DTRACE" "$TMP/k"/t.* >"$TMP/k.list" 2>"$TMP/err"
ok $? "the text listing" "$(cat "$TMP/err")"
"$DTRACE" --format=parquet -o "$TMP/k.parquet" "$TMP/k"/t.* >"$TMP/out" 2>"$TMP/err"
ok $? "--format=parquet exits 0" "$(cat "$TMP/err")"
check "it warns of nothing, writes nothing to stdout" '[ ! -s "$TMP/err" ] && [ ! -s "$TMP/out" ]'
P=$TMP/k.parquet

sql "$P" "SELECT count(*) FROM 'trace.parquet'" >"$TMP/rows" 2>"$TMP/err"
check "one row per line of the listing" \
	'[ "$(cat "$TMP/rows")" = "$(wc -l <"$TMP/k.list")" ] || { cat "$TMP/rows" "$TMP/err"; false; }'
"$DTRACE" -S "$TMP/k"/t.* | awk '$1 == "lost" { print $2, substr($4, 2) }' >"$TMP/lost.want"
sql "$P" "SELECT sum(arg1), count(*) FROM 'trace.parquet'
	  WHERE \"group\" = 'meta' AND event = 'lost' AND tid IS NULL AND task IS NULL" |
	tr '\t' ' ' >"$TMP/lost.got"
check "lost rows: the records and markers dtrace -S counts" \
	'[ -s "$TMP/lost.want" ] && diff "$TMP/lost.want" "$TMP/lost.got"'

# same_lines NAME LISTING FILE: FILE's rows in order but the calls have the
# time, group:event and text of LISTING's lines but a user stream's func events
same_lines() {
	awk '!($1 == "-" && $4 ~ /^func:/) {
		i = index($0, " " $4 " ")
		text = substr($0, i + length($4) + 2)
		sub(/^ +/, "", text)
		print $2 "\t" $4 "\t" text }' "$2" >"$TMP/lines.want"
	sql "$3" "SELECT printf('%d.%03d', time_ns // 1000, time_ns % 1000),
		  \"group\" || ':' || event, text
		  FROM read_parquet('trace.parquet', file_row_number = true)
		  WHERE event <> 'call' ORDER BY file_row_number" >"$TMP/lines.got"
	check "$1: each row in order has its listed line's time, group:event and text" \
		'diff "$TMP/lines.want" "$TMP/lines.got" >"$TMP/lines.diff" ||
		 { head "$TMP/lines.diff"; false; }'
}
same_lines "kernel trace" "$TMP/k.list" "$P"
same_rows "kernel trace" "$P"

awk '$3 != "-" { n[$3]++ } END { for (t in n) print t "\t" n[t] }' "$TMP/k.list" |
	sort >"$TMP/tasks.want"
sql "$P" "SELECT coalesce(task, '<...>') || '-' || tid, count(*) FROM 'trace.parquet'
	  WHERE \"group\" <> 'meta' GROUP BY ALL" | sort >"$TMP/tasks.got"
check "rows per task: the listing's lines per task column" \
	'[ "$(wc -l <"$TMP/tasks.want")" -gt 5 ] && diff "$TMP/tasks.want" "$TMP/tasks.got"'

# the processes: dtrace -p PID lists (but for the lost markers) the rows of pid PID
sql "$P" "SELECT pid, count(*) FROM 'trace.parquet' WHERE pid IS NOT NULL
	  GROUP BY pid ORDER BY 2 DESC, 1 LIMIT 4" >"$TMP/pids.got"
while read -r pid n; do
	printf '%s\t%s\n' "$pid" "$("$DTRACE" -p "$pid" "$TMP/k"/t.* | awk '$3 != "-"' | wc -l)"
done <"$TMP/pids.got" >"$TMP/pids.want"
check "rows per pid: the lines dtrace -p lists, for the 4 largest processes" \
	'[ "$(wc -l <"$TMP/pids.got")" = 4 ] && diff "$TMP/pids.want" "$TMP/pids.got"'

# time as the listing says it (us, 3 decimals) in ns
awk '$4 == "sched:switch" {
		t = $2; sub(/\./, "", t); t += 0
		if ($1 in prev) run[$3] += t - prev[$1]
		prev[$1] = t
	}
	END { for (k in run) print k "\t" run[k] }' "$TMP/k.list" | sort >"$TMP/run.want"
q=$(doc_query parquet-run-time)
check "the documentation has the run time query" '[ -n "$q" ]'
sql "$P" "SELECT coalesce(task, '<...>') || '-' || tid, run_ns FROM ($q)" 2>"$TMP/err" |
	sort >"$TMP/run.got"
check "run time per task (the documented query): the model of the listing's switches" \
	'[ "$(wc -l <"$TMP/run.want")" -gt 5 ] && diff "$TMP/run.want" "$TMP/run.got" ||
	 { cat "$TMP/err"; false; }'

# system calls of three threads: most entries have their exit, some none
# (the thread's next call comes first), some an exit of another call
SYS_ENTRY=$(((1 << 5) | (1 << 24)))
SYS_EXIT=$(((1 << 5) | (2 << 24)))
python3 "$ROOT/tests/host/mktrace.py" "$TMP/sys.cpu0" --cpu 0 $(awk -v en=$SYS_ENTRY -v ex=$SYS_EXIT '
	BEGIN {
		for (i = 0; i < 400; i++) {
			tid = 100 + i % 3; nr = i % 4; t += 10
			printf "%d:%d:%d:%d:%d ", t, en, nr, i, tid
			if (i % 7 == 0)
				continue
			t += 50 + (i * 37) % 400
			printf "%d:%d:%d:%d:%d ", t, ex, i % 11 ? nr : nr + 1, i % 5, tid
		}
	}') 2>"$TMP/err"
ok $? "a trace of system calls (mktrace.py)" "$(cat "$TMP/err")"
"$DTRACE" "$TMP/sys.cpu0" >"$TMP/sys.list" 2>"$TMP/err"
ok $? "its listing" "$(cat "$TMP/err")"
"$DTRACE" --format=parquet -o "$TMP/sys.parquet" "$TMP/sys.cpu0" 2>"$TMP/err"
ok $? "its export" "$(cat "$TMP/err")"
# each thread's syscall lines: an entry, then an exit of the same name
awk '$4 ~ /^syscall:/ {
		tid = $3; sub(/.*-/, "", tid)
		t = $2; sub(/\./, "", t); t += 0
		if ($4 == "syscall:exit" && last[tid] == "entry " $6) {
			d = t - at[tid]; n[$6]++
			if (d > max[$6]) max[$6] = d
		}
		last[tid] = substr($4, 9) " " $6; at[tid] = t
	}
	END { for (s in n) print s "\t" n[s] "\t" max[s] }' "$TMP/sys.list" | sort >"$TMP/sys.want"
q=$(doc_query parquet-syscall-latency)
sql "$TMP/sys.parquet" "SELECT syscall, calls, max_ns FROM ($q)" 2>"$TMP/err" | sort >"$TMP/sys.got"
check "syscall latencies (the documented query): the pairs and maxima of the listing" \
	'[ "$(wc -l <"$TMP/sys.want")" = 4 ] && diff "$TMP/sys.want" "$TMP/sys.got" ||
	 { cat "$TMP/err"; false; }'
sql "$TMP/sys.parquet" "SELECT count(*) FROM ($q) WHERE NOT (p50 <= p90 AND p90 <= p99 AND p99 <= max_ns)" \
	>"$TMP/pct" 2>&1
check "its percentiles are in order" '[ "$(cat "$TMP/pct")" = 0 ]'

# 4. what the file is, as DuckDB's own readers of the metadata say
sql "$P" "SELECT name, type, coalesce(repetition_type, ''), coalesce(converted_type, ''),
	  coalesce(logical_type, '') FROM parquet_schema('trace.parquet')" >"$TMP/schema.got"
cat >"$TMP/schema.want" <<'EOF'
schema	NULL			
machine	BYTE_ARRAY	OPTIONAL	UTF8	StringType()
time_ns	INT64	REQUIRED		
cpu	INT32	OPTIONAL		
tid	INT64	OPTIONAL		
pid	INT64	OPTIONAL		
task	BYTE_ARRAY	OPTIONAL	UTF8	StringType()
group	BYTE_ARRAY	REQUIRED	UTF8	StringType()
event	BYTE_ARRAY	REQUIRED	UTF8	StringType()
arg1	INT64	OPTIONAL		
arg2	INT64	OPTIONAL		
text	BYTE_ARRAY	OPTIONAL	UTF8	StringType()
function	BYTE_ARRAY	OPTIONAL	UTF8	StringType()
depth	INT32	OPTIONAL		
duration_ns	INT64	OPTIONAL		
EOF
check "parquet_schema(): the types, plain integers, strings as STRING/UTF8" \
	'diff "$TMP/schema.want" "$TMP/schema.got"'
sql "$P" "SELECT DISTINCT path_in_schema, compression, encodings
	  FROM parquet_metadata('trace.parquet')
	  WHERE path_in_schema NOT IN ('function', 'machine')" |
	sort >"$TMP/meta.got"
cat >"$TMP/meta.want" <<'EOF'
arg1	ZSTD	PLAIN, RLE
arg2	ZSTD	PLAIN, RLE
cpu	ZSTD	PLAIN, RLE
depth	ZSTD	PLAIN, RLE
duration_ns	ZSTD	PLAIN, RLE
event	ZSTD	PLAIN, RLE, RLE_DICTIONARY
group	ZSTD	PLAIN, RLE, RLE_DICTIONARY
pid	ZSTD	PLAIN, RLE
task	ZSTD	PLAIN, RLE, RLE_DICTIONARY
text	ZSTD	PLAIN, RLE
tid	ZSTD	PLAIN, RLE
time_ns	ZSTD	PLAIN, RLE
EOF
check "parquet_metadata(): zstd pages, the short strings dictionary encoded" \
	'diff "$TMP/meta.want" "$TMP/meta.got"'

# a trace of 200k events: row groups of 128 Ki rows, their time ranges right
gen big -s 3 -c 2 -n 100000
/usr/bin/time -f %M -o "$TMP/rss.small" \
	"$DTRACE" --format=parquet -o "$TMP/big.parquet" "$TMP/big"/t.* 2>"$TMP/err"
ok $? "a 200k event trace exports" "$(cat "$TMP/err")"
sql "$TMP/big.parquet" "SELECT count(*), count(DISTINCT row_group_id), max(row_group_num_rows)
	  FROM parquet_metadata('trace.parquet')" >"$TMP/groups"
check "in 2 row groups, of 131072 rows at most" \
	'[ "$(cat "$TMP/groups")" = "$(printf "28\t2\t131072")" ]'
sql "$TMP/big.parquet" "WITH r AS (SELECT file_row_number // 131072 AS g, min(time_ns) AS lo,
	  max(time_ns) AS hi FROM read_parquet('trace.parquet', file_row_number = true) GROUP BY g),
	  m AS (SELECT row_group_id AS g, stats_min_value::BIGINT AS lo, stats_max_value::BIGINT AS hi
	  FROM parquet_metadata('trace.parquet') WHERE path_in_schema = 'time_ns')
	  SELECT count(*) FROM r JOIN m USING (g) WHERE r.lo = m.lo AND r.hi = m.hi" >"$TMP/stats"
check "each row group's time_ns statistics: its rows' first and last time" \
	'[ "$(cat "$TMP/stats")" = 2 ]'
sql "$TMP/big.parquet" "SELECT count(*) FROM 'trace.parquet'" >"$TMP/rows"
check "200000 rows" '[ "$(cat "$TMP/rows")" = 200000 ]'
same_rows "2 row groups" "$TMP/big.parquet"
gen huge -s 3 -c 2 -n 400000
/usr/bin/time -f %M -o "$TMP/rss.large" \
	"$DTRACE" --format=parquet -o "$TMP/huge.parquet" "$TMP/huge"/t.* 2>"$TMP/err"
ok $? "an 800k event trace exports" "$(cat "$TMP/err")"
check "peak RSS flat: 800k events take under 1.25 times what 200k do (+ 4 MiB)" \
	'[ $(cat "$TMP/rss.large") -lt $(( $(cat "$TMP/rss.small") * 5 / 4 + 4096 )) ] ||
	 { echo "200k: $(cat "$TMP/rss.small") KiB, 800k: $(cat "$TMP/rss.large") KiB"; false; }'

# 3. function calls: a program whose calls --report counts
cat >"$TMP/calls.c" <<'C'
#include <pthread.h>
#define F __attribute__((noinline))
static volatile int sink;
F void leaf(int i) { sink += i; }
F void spin(int n) { for (int i = 0; i < n; i++) sink++; }
F void mid(int n) { for (int i = 0; i < n; i++) leaf(i); spin(200); }
F int rec(int n) { spin(50); return n ? rec(n - 1) + 1 : 0; }
F void *worker(void *arg) { int n = (int)(long)arg; mid(n); rec(n); return NULL; }
int main(void)
{
	pthread_t t[2];

	mid(4);
	rec(3);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 2));
	for (long i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
C
cc -O0 -g -finstrument-functions -pthread -o "$TMP/calls" "$TMP/calls.c" 2>"$TMP/cc.err"
ok $? "build the program" "$(cat "$TMP/cc.err")"
traced "$TMP/calls.d" "$TMP/calls" 2>"$TMP/err"
ok $? "it runs traced" "$(cat "$TMP/err")"
"$DTRACE" --report --format=csv "$TMP/calls.d"/trace.* 2>"$TMP/err" |
	awk -F, 'NR > 1 { print $1 "\t" $4 "\t" $8 "\t" $9 "\t" $7 }' | sort >"$TMP/report.want"
"$DTRACE" --format=parquet -o "$TMP/calls.parquet" "$TMP/calls.d"/trace.* 2>"$TMP/err"
ok $? "--format=parquet of the calls" "$(cat "$TMP/err")"
P=$TMP/calls.parquet
sql "$P" "SELECT function, count(*), min(duration_ns), max(duration_ns),
	  sum(duration_ns) // count(*) FROM 'trace.parquet' WHERE event = 'call'
	  GROUP BY function" | sort >"$TMP/report.got"
check "per function: the calls, min, max and average of --report" \
	'[ "$(wc -l <"$TMP/report.want")" = 6 ] && diff "$TMP/report.want" "$TMP/report.got"'
sql "$P" "SELECT count(*) FROM 'trace.parquet' WHERE \"group\" = 'func' AND event = 'call'
	  AND function IS NOT NULL AND depth IS NOT NULL AND duration_ns IS NOT NULL
	  AND cpu IS NULL AND task = 'calls' AND pid IS NOT NULL
	  AND (depth = 0) = (function IN ('main', 'worker'))" >"$TMP/calls.n"
sql "$P" "SELECT count(*) FROM 'trace.parquet'" >"$TMP/rows"
check "every row a call (40 entries: 40 calls), with its function, depth, duration" \
	'[ "$(cat "$TMP/calls.n")" = 40 ] && [ "$(cat "$TMP/rows")" = 40 ]'
same_rows "calls" "$P"
sql "$TMP/k.parquet" "SELECT count(*) FROM 'trace.parquet'
	  WHERE function IS NOT NULL OR depth IS NOT NULL OR duration_ns IS NOT NULL" >"$TMP/n"
check "events that are no calls have no function, depth or duration" '[ "$(cat "$TMP/n")" = 0 ]'
q=$(doc_query parquet-slowest-calls)
# the outer SELECT keeps no order of its own: SQL leaves it to the engine
sql "$P" "SELECT function, duration_ns FROM ($q) ORDER BY duration_ns DESC" >"$TMP/slow" 2>"$TMP/err"
# two functions may share the largest maximum: the first row is any of them
sort -t"$(printf '\t')" -k4,4nr "$TMP/report.want" | cut -f1,4 |
	awk -F'\t' 'NR == 1 { max = $2 } $2 == max' >"$TMP/slowest.want"
check "the slowest calls (the documented query): 10, the first a function with --report's largest maximum" \
	'[ "$(wc -l <"$TMP/slow")" = 10 ] && head -n 1 "$TMP/slow" | grep -qxF -f "$TMP/slowest.want" &&
	 sort -t"$(printf "\t")" -k2,2nr -c "$TMP/slow" ||
	 { cat "$TMP/slowest.want" "$TMP/slow" "$TMP/report.want"; false; }'

# kernel and user streams: a user stream's function events become its calls;
# user:mark (1) is named user:work by process 5000's maps
gen mixed -s 5 -c 2 -u 2 -n 3000 -l 2
echo "event 1 work took %u of %u" >"$TMP/mixed/trace.pid5000.maps"
"$DTRACE" "$TMP/mixed"/t.* 2>/dev/null >"$TMP/mixed.list"
"$DTRACE" --report --format=csv "$TMP/mixed"/t.* 2>/dev/null |
	awk -F, 'NR > 1 { n += $4 } END { print n }' >"$TMP/mixed.calls"
"$DTRACE" --format=parquet -o "$TMP/mixed.parquet" "$TMP/mixed"/t.* 2>"$TMP/err"
ok $? "kernel and user streams export" "$(cat "$TMP/err")"
sql "$TMP/mixed.parquet" "SELECT count(*) - count(function), count(function)
	  FROM 'trace.parquet'" >"$TMP/mixed.got"
awk '!($1 == "-" && $4 ~ /^func:/) { n++ } END { print n }' "$TMP/mixed.list" |
	paste - "$TMP/mixed.calls" >"$TMP/mixed.want"
check "rows: the listing's lines but the user streams' func events, and --report's calls" \
	'diff "$TMP/mixed.want" "$TMP/mixed.got"'
same_lines "kernel and user streams" "$TMP/mixed.list" "$TMP/mixed.parquet"
sql "$TMP/mixed.parquet" "SELECT count(*) FROM 'trace.parquet' WHERE \"group\" = 'user'
	  AND event = 'work' AND pid = 5000 AND cpu IS NULL AND task = 'ktgen-user'" >"$TMP/n"
check "the program's name for its events: user:work" \
	'[ "$(cat "$TMP/n")" -gt 100 ] && [ "$(cat "$TMP/n")" = "$(grep -c " user:work " "$TMP/mixed.list")" ]'

"$DTRACE" --format=parquet --from=10s -o "$TMP/empty.parquet" "$TMP/k"/t.* 2>"$TMP/err"
ok $? "no event after --from: exits 0" "$(cat "$TMP/err")"
sql "$TMP/empty.parquet" "SELECT count(*) FROM 'trace.parquet'" >"$TMP/rows" 2>&1
node "$ROOT/tests/host/parquet-arrow.js" "$TMP/empty.parquet" >"$TMP/arrow" 2>&1
check "an empty table, with the columns, for both readers" \
	'[ "$(cat "$TMP/rows")" = 0 ] && [ "$(wc -l <"$TMP/arrow")" = 1 ] &&
	 grep -q "^machine:Utf8:true	time_ns:Int64:false.*duration_ns:Int64:true$" "$TMP/arrow"'

# several machines' directories (ktrace --listen's: DIR/NAME with .session):
# each row's machine is its listed line's first column; one machine's rows
# have none (null)
mkdir -p "$TMP/coll/alpha" "$TMP/coll/beta"
"$KTGEN" -s 1 -c 2 -n 200 "$TMP/coll/alpha/trace" >/dev/null &&
	"$KTGEN" -s 2 -c 2 -n 300 -l 2 "$TMP/coll/beta/trace" >/dev/null &&
	touch "$TMP/coll/alpha/.session" "$TMP/coll/beta/.session"
ok $? "two machine directories of ktgen traces"
"$DTRACE" "$TMP/coll" >"$TMP/coll.list" 2>/dev/null
"$DTRACE" --format=parquet -o "$TMP/coll.parquet" "$TMP/coll" 2>/dev/null
ok $? "two machines export"
awk '{ print $1 }' "$TMP/coll.list" >"$TMP/machines.want"
sql "$TMP/coll.parquet" "SELECT coalesce(machine, 'NULL')
	  FROM read_parquet('trace.parquet', file_row_number = true) ORDER BY file_row_number" \
	>"$TMP/machines.got"
check "each row's machine is its listed line's: alpha, beta in the merge's order" \
	'[ "$(sort -u "$TMP/machines.want" | tr "\n" " ")" = "alpha beta " ] &&
	 cmp "$TMP/machines.want" "$TMP/machines.got"'
sed 's/^[^ ]* //' "$TMP/coll.list" >"$TMP/coll.nomachine"
same_lines "two machines" "$TMP/coll.nomachine" "$TMP/coll.parquet"
"$DTRACE" --format=parquet --machine beta -o "$TMP/beta.parquet" "$TMP/coll" 2>/dev/null
sql "$TMP/beta.parquet" "SELECT machine, count(*) FROM 'trace.parquet' GROUP BY ALL" >"$TMP/n"
check "--machine beta: beta's rows only, as many as its lines" \
	'[ "$(cat "$TMP/n")" = "$(printf "beta\t%s" "$(grep -c "^beta " "$TMP/coll.list")")" ]'
sql "$P" "SELECT count(machine) FROM 'trace.parquet'" >"$TMP/n"
check "one machine: no machine on any row" '[ "$(cat "$TMP/n")" = 0 ]'

expect_error "a full disk: an error naming the file" "/dev/full: write error" \
	"$DTRACE" --format=parquet -o /dev/full "$TMP/k"/t.*
expect_error "without -o: a usage error" "--format=parquet writes a binary file: give it with -o FILE" \
	"$DTRACE" --format=parquet "$TMP/k"/t.*
expect_error "an -o in no directory: an error naming it" "$TMP/no/such.parquet" \
	"$DTRACE" --format=parquet -o "$TMP/no/such.parquet" "$TMP/k"/t.*

# 5. long function names: the dictionary's bytes bound a row group
NR_LONG=4500
mkdir -p "$TMP/long"
python3 - "$TMP/long/long.s" $NR_LONG <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write(".text\n")
    for i in range(int(sys.argv[2])):   # 8 KiB names, the number first: all different
        n = "f%05d_" % i + "x" * 8186
        f.write(".type %s,@function\n%s:\n\tret\n.size %s,1\n" % (n, n, n))
EOF
"${CC:-cc}" -c -o "$TMP/long/long.o" "$TMP/long/long.s" 2>"$TMP/err" &&
	"${CC:-cc}" -shared -nostdlib -o "$TMP/long/liblong.so" "$TMP/long/long.o" 2>>"$TMP/err"
ok $? "a library of $NR_LONG functions with 8 KiB names" "$(cat "$TMP/err")"
# each function called once, in address order, the library at 0x10000000
nm -n "$TMP/long/liblong.so" | awk '$2 == "t"' >"$TMP/long/nm"
printf 'snapshot 1\nobject 10000000 10000000 20000000 - %s\n' "$TMP/long/liblong.so" \
	>"$TMP/long/trace.pid7.maps"
# shellcheck disable=SC2046
python3 "$ROOT/tests/host/mktrace.py" "$TMP/long/trace.pid7.tid7" --user 7 7 $(python3 -c '
import sys
for i, line in enumerate(open(sys.argv[1])):
    a = int(line.split()[0], 16) + 0x10000000
    print("%d:%s:%d:0 %d:%s:%d:0" % (1000 * i + 1000, sys.argv[2], a, 1000 * i + 1500, sys.argv[3], a))
' "$TMP/long/nm" $(((1 << 12) | (1 << 24))) $(((1 << 12) | (2 << 24))))
ok $? "a trace calling each function once (mktrace.py)"
"$DTRACE" --format=parquet -o "$TMP/long.parquet" "$TMP/long/trace.pid7.tid7" 2>"$TMP/err"
ok $? "long function names export" "$(cat "$TMP/err")"
sql "$TMP/long.parquet" "SELECT count(*), count_if(total_uncompressed_size <= 32 * 1024 * 1024 + 16384)
	  FROM parquet_metadata('trace.parquet') WHERE path_in_schema = 'function'" >"$TMP/groups"
check "2 row groups, each one's function column at most 32 MiB and a name" \
	'[ "$(cat "$TMP/groups")" = "$(printf "2\t2")" ] || { cat "$TMP/groups"; false; }'
"$DTRACE" --report --format=csv "$TMP/long/trace.pid7.tid7" 2>/dev/null |
	awk -F, 'NR > 1 { n += $4 } END { print n }' >"$TMP/long.calls"
sql "$TMP/long.parquet" "SELECT count(*) FROM 'trace.parquet' WHERE event = 'call'" >"$TMP/rows"
check "every call a row: $NR_LONG, --report's count" \
	'[ "$(cat "$TMP/rows")" = $NR_LONG ] && [ "$(cat "$TMP/long.calls")" = $NR_LONG ]'
awk '{ print $3 }' "$TMP/long/nm" >"$TMP/long.want"
sql "$TMP/long.parquet" "SELECT function FROM 'trace.parquet' ORDER BY time_ns" >"$TMP/long.got"
check "each row's function is nm's name of its address, in call order" \
	'[ "$(wc -l <"$TMP/long.want")" = $NR_LONG ] && cmp "$TMP/long.want" "$TMP/long.got"'
done_testing
