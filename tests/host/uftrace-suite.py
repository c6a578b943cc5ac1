#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""uftrace's test suite as a ground truth for dtrace --calltree
(tests/host/95-user-uftrace-suite.sh).

uftrace's tests/ holds s-*.c programs and a t*.py per test: a class
TestCase(TestBase) whose constructor has the expected output (a call
tree, `uftrace live` of the program) and whose methods say how the program
is built and which uftrace options the run takes.  They are loaded here
against a TestBase of our own (the `runtest` module they import is
replaced): it builds what they ask for with our flags and answers what the
run needs; nothing of uftrace itself runs.

  plan TESTS                     a line per t*.py: "test NAME SOURCE" or
                                 "skip NAME SOURCE REASON" (tab-separated);
                                 "count NAME SOURCE" for a program none of
                                 whose tests has a tree to compare: NAME's
                                 build and run, for the counts
  build TESTS NAME MODE DIR [plain]
                                 build it in DIR at MODE (O0, O2uftrace,
                                 O2g); print the command line to run;
                                 plain: where NAME skips it, the program
                                 alone (exit 2 if that fails too)
  tree TESTS NAME MODE DIR CALLTREE
                                 compare dtrace --calltree's output with the
                                 expected tree; print the difference, exit 1
                                 when they differ

Trees are compared as uftrace's own runner compares them: per task (the
tasks in any order), from the first main() on, functions and nesting,
times ignored.  Only functions defined in the programs built (those
-finstrument-functions instruments) are compared: uftrace also shows
the calls into libraries (PLT), which a -finstrument-functions hook never
sees; a library call's children move up to its caller.
"""
import os
import re
import shlex
import subprocess
import sys
import types

# the flags of each mode: uftrace's suite builds with these extra flags
# (no inlining, so that the tree is the source's)
UFTRACE_CFLAGS = ['-fno-inline', '-fno-builtin', '-fno-ipa-cp',
                  '-fno-omit-frame-pointer', '-D_FORTIFY_SOURCE=0']
MODES = {
    'O0': ([], '-O0 -finstrument-functions'),
    'O2uftrace': (UFTRACE_CFLAGS, '-O2 -finstrument-functions'),
    'O2g': ([], '-O2 -g -finstrument-functions'),
}

# uftrace options that do not change the tree it prints (as we compare it)
NEUTRAL = {'--no-merge', '--no-pager', '--no-comment', '--keep-pid',
           '--no-libcall', '--no-event'}
# options we apply to our tree the way uftrace applies them to its own
FILTERS = {'-F', '-N', '-D'}


class Skip(Exception):
    pass


class TestBase:
    """What uftrace's t*.py files use of their runtest.TestBase."""
    TEST_SUCCESS, TEST_UNSUPP_LANG, TEST_BUILD_FAIL = 0, -1, -2
    TEST_ABNORMAL_EXIT, TEST_TIME_OUT, TEST_DIFF_RESULT = -3, -4, -5
    TEST_NONZERO_RETURN, TEST_SKIP, TEST_SUCCESS_FIXED = -6, -7, -8
    supported_lang = {
        'C': {'cc': 'gcc', 'flags': 'CFLAGS', 'ext': '.c'},
        'C++': {'cc': 'g++', 'flags': 'CXXFLAGS', 'ext': '.cpp'},
    }
    default_cflags = []
    feature = {'python3', 'perf'}
    uftrace_cmd = 'uftrace'
    basedir = objdir = srcdir = ''
    tests_dir = ''		# where the s-* sources are
    out_dir = ''		# where they are built

    def __init__(self, name, result, lang='C', cflags='', ldflags='',
                 sort='task', serial=False):
        self.name, self.result, self.lang = name, result, lang
        self.cflags, self.ldflags, self.sort_method = cflags, ldflags, sort
        self.serial = serial
        self.subcmd = 'live'
        self.option = ''
        self.exearg = 't-' + name
        self.p_flag = ''
        self.p_libs = []
        self.debug = self.keep = False
        self.builds = []		# the commands build() ran, as lists

    # anything else a test may call: harmless answers
    def pr_debug(self, msg):
        pass

    def set_debug(self, dbg):
        pass

    def set_keep(self, keep):
        pass

    def check_dependency(self, item):
        return True

    def check_perf_paranoid(self):
        return True

    def get_machine(self):
        return os.uname().machine

    def check_arch_sdt_support(self):
        return False

    def check_arch_mfentry_mnop_mcount_support(self):
        return False

    def __getattr__(self, attr):
        if attr.startswith('check_'):
            return lambda *a, **k: True
        raise AttributeError(attr)

    def _cc(self, lang, out, src, cflags, ldflags, extra=''):
        flags = ' '.join(TestBase.default_cflags + [self.cflags, cflags])
        cmd = ['g++' if lang == 'C++' else 'gcc', '-o', out] + flags.split() + \
            extra.split() + [os.path.join(TestBase.tests_dir, src)] + \
            (self.ldflags + ' ' + ldflags).split()
        return self._run(cmd)

    def _run(self, cmd):
        self.builds.append(cmd)
        p = subprocess.run(cmd, cwd=TestBase.out_dir, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if p.returncode:
            sys.stderr.write(' '.join(cmd) + '\n' + p.stdout.decode(errors='replace'))
            return TestBase.TEST_BUILD_FAIL
        return TestBase.TEST_SUCCESS

    def build(self, name, cflags='', ldflags=''):
        lang = TestBase.supported_lang.get(self.lang)
        if not lang:
            return TestBase.TEST_UNSUPP_LANG
        return self._cc(self.lang, 't-' + name, 's-' + name + lang['ext'], cflags, ldflags)

    def build_notrace_lib(self, dstname, srcname, cflags='', ldflags=''):
        cflags = cflags.replace('-finstrument-functions', '').replace('-pg', '')
        return self._cc('C', 'lib%s.so' % dstname, 's-%s.c' % srcname, cflags, ldflags,
                        '-shared -fPIC')

    def build_libabc(self, cflags='', ldflags=''):
        return self._cc('C', 'libabc_test_lib.so', 's-lib.c', cflags, ldflags, '-shared -fPIC')

    def build_libfoo(self, name, cflags='', ldflags=''):
        return self._cc('C++', 'lib%s.so' % name, 's-lib%s.cpp' % name, cflags, ldflags,
                        '-shared -fPIC')

    def build_libmain(self, exename, srcname, libs, cflags='', ldflags='', instrument=True):
        if not instrument:
            cflags = cflags.replace('-finstrument-functions', '').replace('-pg', '')
        ldflags += ' -Wl,-rpath,$ORIGIN -L. ' + ' '.join('-l' + lib[3:-3] for lib in libs)
        return self._cc(self.lang, 't-' + exename, srcname, cflags, ldflags)

    # what the runner asks of a test, unless the test has its own
    def prepare(self):
        return ''

    def setup(self):
        pass

    def runcmd(self):
        return ''

    def prerun(self, timeout):
        return TestBase.TEST_SUCCESS

    def postrun(self, ret):
        return ret

    def fixup(self, cflags, result):
        return result

    def sort(self, output, ignored=''):
        return output


def load(tests, tname):
    """The TestCase of tests/TNAME.py, set up (its options known)."""
    runtest = types.ModuleType('runtest')
    runtest.TestBase = TestBase
    runtest.TestCase = None
    sys.modules['runtest'] = runtest
    TestBase.tests_dir = TestBase.basedir = TestBase.srcdir = tests
    path = os.path.join(tests, tname + '.py')
    mod = types.ModuleType(tname)
    mod.__file__ = path
    try:
        exec(compile(open(path).read(), path, 'exec'), mod.__dict__)
        tc = mod.TestCase()
        tc.setup()
    except Skip:
        raise
    except Exception as e:
        raise Skip('its test does not load without uftrace (%s: %s)' % (type(e).__name__, e))
    return tc


def usable(tc):
    """Why a test's tree is not one to compare ours with, or None."""
    cls = type(tc)
    for meth, why in (('runcmd', 'runs its own command'),
                      ('prepare', 'records before the run (replay, report, graph, ...)'),
                      ('prerun', 'needs a setup of its own before the run'),
                      ('sort', 'sorts the output its own way'),
                      ('postrun', 'checks the run its own way')):
        if getattr(cls, meth) is not getattr(TestBase, meth):
            return why
    if tc.subcmd != 'live':
        return 'uftrace %s' % tc.subcmd
    if tc.sort_method not in ('task', 'simple'):
        return 'a %s view (not a call tree)' % tc.sort_method
    if tc.lang not in TestBase.supported_lang:
        return 'language %s' % tc.lang
    args = shlex.split(tc.exearg)
    if not args or args[0] != 't-' + tc.name:
        return 'runs %s, not its program' % (args[0] if args else 'nothing')
    words = shlex.split(tc.option)
    i = 0
    while i < len(words):
        w = words[i]
        if w in NEUTRAL:
            i += 1
            continue
        opt, val = (w[:2], w[2:]) if w[:2] in FILTERS else (w, '')
        if opt in FILTERS:
            if not val:
                i += 1
                val = words[i] if i < len(words) else ''
            ok = re.fullmatch(r'\d+', val) if opt == '-D' else '@' not in val
            if not ok:
                return 'uftrace trigger %s %s' % (opt, val)
            i += 1
            continue
        return 'uftrace option %s' % w
    only, hide, _ = filters(tc)
    if set(only) & set(hide):
        return 'a function both in -F and in -N'
    if not re.search(r'\| *main\(\)' if tc.sort_method == 'task' else r'\| *\w+\(\)',
                     tc.result):
        return 'its expected output is not a call tree'
    return None


def filters(tc):
    """(only, hide, depth): -F functions, -N functions, -D depth."""
    only, hide, depth = [], [], None
    words = shlex.split(tc.option)
    i = 0
    while i < len(words):
        w = words[i]
        if w[:2] in FILTERS:
            opt, val = w[:2], w[2:]
            if not val:
                i += 1
                val = words[i]
            if opt == '-F':
                only.append(val)
            elif opt == '-N':
                hide.append(val)
            else:
                depth = int(val)
        i += 1
    return only, hide, depth


def cmd_plan(tests):
    import tempfile
    # a test may write files where it is loaded (a script it runs): not here
    with tempfile.TemporaryDirectory(prefix='uftrace-plan.') as scratch:
        os.chdir(scratch)
        plan(tests)
        os.chdir('/')


def plan(tests):
    tested, counted, lines = set(), {}, []
    for f in sorted(os.listdir(tests)):
        m = re.fullmatch(r'(t\d+_\w+)\.py', f)
        if not m:
            continue
        tname = m.group(1)
        try:
            tc = load(tests, tname)
            why = usable(tc)
            src = 's-%s%s' % (tc.name, TestBase.supported_lang.get(tc.lang, {}).get('ext', ''))
            args = shlex.split(tc.exearg)
            if why and args and args[0] == 't-' + tc.name and tc.lang in TestBase.supported_lang:
                counted.setdefault(src, tname)	# its program, run as it is
        except Skip as e:
            why, src = str(e), '(tests that do not load)'
        if why:
            lines.append('skip\t%s\t%s\t%s' % (tname, src, why))
        else:
            tested.add(src)
            lines.append('test\t%s\t%s' % (tname, src))
    # a program no test of which has a tree to compare: its counts all the same
    for src, tname in sorted(counted.items()):
        if src not in tested:
            lines.append('count\t%s\t%s' % (tname, src))
    print('\n'.join(lines))


def mode_flags(mode):
    defaults, cflags = MODES[mode]
    TestBase.default_cflags = list(defaults)
    return cflags


def cmd_build(tests, tname, mode, out, plain=''):
    cflags = mode_flags(mode)
    os.makedirs(out, exist_ok=True)
    os.chdir(out)
    TestBase.out_dir = out
    tc = load(tests, tname)
    ret = tc.build(tc.name, cflags, '')
    if plain and ret == TestBase.TEST_SKIP:
        # for the counts: the program alone, as the tests build it by default
        tc.builds = []
        if TestBase.build(tc, tc.name, cflags, '') == TestBase.TEST_SUCCESS:
            ret = TestBase.TEST_SUCCESS
    if ret == TestBase.TEST_SKIP or (plain and ret != TestBase.TEST_SUCCESS):
        sys.stderr.write('its test does not build it with these flags\n')
        sys.exit(2)
    if ret != TestBase.TEST_SUCCESS:
        sys.exit(1)
    for cmd in tc.builds:
        if '-finstrument-functions' not in cmd:
            sys.stderr.write('built without -finstrument-functions (for uftrace\'s '
                             'dynamic patching): %s\n' % ' '.join(cmd))
            sys.exit(2)
    args = shlex.split(tc.exearg)
    print(' '.join(shlex.quote(a) for a in [os.path.join(out, args[0])] + args[1:]))


def defined_functions(out):
    """Names of the functions defined in the programs and libraries built in
    OUT (demangled, without parameters, as both trees print them): those
    of the programs, and those of the libraries."""
    names, lib_names = set(), set()
    for f in os.listdir(out):
        if not (f.startswith('t-') or f.endswith('.so')):
            continue
        p = subprocess.run(['nm', '--defined-only', '-C', os.path.join(out, f)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for line in p.stdout.decode(errors='replace').splitlines():
            parts = line.split(' ', 2)
            if len(parts) == 3 and parts[1] in 'tTwW':
                names.add(plain_name(parts[2]))
                if f.endswith('.so'):
                    lib_names.add(plain_name(parts[2]))
    return names, lib_names


def without_plt(nodes, lib_names):
    """uftrace shows a call into a library twice when the library is
    instrumented too: the PLT call, and the function's own entry inside it
    (f() { f(); }); a -finstrument-functions hook sees the function once.
    The PLT call is renamed f@plt, which keep_only() then leaves out."""
    out = []
    for i, (d, n) in enumerate(nodes):
        only_child = i + 1 < len(nodes) and nodes[i + 1] == (d + 1, n) and \
            next_at(nodes, i + 1, d + 1) == next_at(nodes, i, d)
        out.append((d, n + '@plt' if n in lib_names and only_child else n))
    return out


def next_at(nodes, i, depth):
    """The index of the first node after I at DEPTH or above."""
    for j in range(i + 1, len(nodes)):
        if nodes[j][0] <= depth:
            return j
    return len(nodes)


def _plain_name():
    """flat-vs-count.py's plain_name(): demangled names as dtrace prints them."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        'flat_vs_count', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      'flat-vs-count.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.plain_name


plain_name = _plain_name()


# a call's line, "f() {" or "f();", and dtrace's note on a frame it
# repaired ("/* ! no exit recorded ... */"); a closing line, "} /* f */"
LINE = re.compile(r'^(?P<indent> *)(?:(?P<open>[^ ].*?)\(\)(?: \{|;)(?: /\* (?P<note>.*) \*/)?'
                  r'|\} /\* (?P<close>.*?) \*/.*)\s*$')


def parse(lines):
    """[(depth, name)] of a tree's lines (the text after "| "): a node per
    call, its depth from the indentation; closing lines only end frames.
    A frame entered before the trace started (a forked child's callers)
    is no call of this task: uftrace does not show it either."""
    nodes = []
    for ln in lines:
        m = LINE.match(ln)
        if m and m.group('open') is not None and \
                'entered before the trace started' not in (m.group('note') or ''):
            nodes.append((len(m.group('indent')) // 2, m.group('open')))
    return nodes


def expected_tasks(tc, cflags):
    """The expected tree per task, in order: uftrace's task_sort (from the
    first main() on) or, for the simple view, one task."""
    result = tc.fixup(cflags, tc.result)
    if tc.sort_method == 'simple':
        return [parse(ln.split('|', 1)[1][1:] for ln in result.split('\n')
                      if '|' in ln and not ln.startswith('#'))]
    tasks, order, started = {}, [], False
    for ln in result.split('\n'):
        if not started and re.search(r'\| *main\(\)', ln):
            started = True
        if not started:
            continue
        if ln.strip() == '':
            break
        m = re.match(r'[^[|]*\[ *(\d+)\] \|(.*)$', ln)
        if m:
            tid, text = m.group(1), m.group(2)
        else:
            continue
        if tid not in tasks:
            tasks[tid] = []
            order.append(tid)
        tasks[tid].append(text[1:] if text.startswith(' ') else text)
    return [parse(tasks[t]) for t in order]


def our_tasks(calltree):
    """dtrace --calltree's threads: [(depth, name)] each, from main() on in
    a thread whose outermost frames include main()."""
    tasks, cur = [], None
    for ln in open(calltree, errors='replace'):
        ln = ln.rstrip('\n')
        if ln.startswith('# thread '):
            cur = []
            tasks.append(cur)
        elif cur is not None and '| ' in ln and not ln.startswith('#'):
            cur.append(ln.split('| ', 1)[1])
    trees = []
    for t in tasks:
        nodes = parse(t)
        for i, (d, n) in enumerate(nodes):
            if d == 0 and n == 'main':
                nodes = nodes[i:]
                break
        else:
            # a thread: uftrace ends its record when its start function
            # returns; what runs after (thread-specific destructors) is in
            # our trace and the counts, not in uftrace's tree
            if nodes and nodes[0][0] == 0:
                nodes = nodes[:next_at(nodes, 0, 0)]
        trees.append(nodes)
    return trees


def keep_only(nodes, names):
    """The tree without the nodes whose name is not in NAMES; their
    children move up to their caller."""
    out, removed = [], []	# removed: depths of the removed ancestors
    for d, n in nodes:
        while removed and removed[-1] >= d:
            removed.pop()
        if n in names:
            out.append((d - len(removed), n))
        else:
            removed.append(d)
    return out


def matches(name, patterns):
    """Whether NAME is one of uftrace's -F/-N PATTERNS: a name, or a regular
    expression where it has one of its characters (uftrace's default)."""
    for p in patterns:
        if re.fullmatch(r'[\w:~]+', p):
            if name == p:
                return True
        elif re.search(p, name):
            return True
    return False


def apply_filters(nodes, only, hide, depth):
    """uftrace's -F (only these functions' subtrees), -N (not these
    functions nor what they call) and -D (that many levels below the
    innermost -F function, or from the top); a call is shown as deep as
    the calls shown above it (and the frames a task started in)."""
    out, frames, skip = [], [], None	# frames: (depth, shown, is a -F) open
    for d, n in nodes:
        if skip is not None and d > skip:
            continue
        skip = None
        while frames and d <= frames[-1][0]:
            frames.pop()
        if matches(n, hide):
            skip = d
            continue
        is_f = bool(only) and matches(n, only)
        starts = [i for i, f in enumerate(frames) if f[2]]
        if is_f:
            below = 0
        elif only and not starts:
            below = None	# outside every -F subtree
        else:
            below = d - (frames[starts[-1]][0] if starts else 0) if starts else d
        shown = below is not None and (depth is None or below < depth)
        if shown:	# (a forked child's calls start below its inherited frames)
            out.append(((0 if only else d - len(frames)) + sum(1 for f in frames if f[1]), n))
        frames.append((d, shown, is_f))
    return out


def render(trees):
    return ['\n'.join('  ' * d + n for d, n in t) for t in trees]


def cmd_tree(tests, tname, mode, out, calltree):
    cflags = mode_flags(mode)
    os.chdir(out)
    TestBase.out_dir = out
    tc = load(tests, tname)
    names, lib_names = defined_functions(out)
    only, hide, depth = filters(tc)
    # uftrace ignores a -F of a function it does not find
    only = [f for f in only if any(matches(n, [f]) for n in names)]
    want = [keep_only(without_plt(t, lib_names), names) for t in expected_tasks(tc, cflags)]
    got = [apply_filters(keep_only(t, names), only, hide, depth) for t in our_tasks(calltree)]
    want = sorted(t for t in render(want) if t)
    got = sorted(t for t in render(got) if t)
    if want == got:
        print('%d tasks, %d calls' % (len(want), sum(t.count('\n') + 1 for t in want)))
        return 0
    import difflib
    sys.stdout.writelines(difflib.unified_diff(
        '\n\n'.join(want).splitlines(True), '\n\n'.join(got).splitlines(True),
        'uftrace %s' % tname, 'dtrace --calltree', n=3))
    print()
    return 1


def main(argv):
    argv = argv[:2] + [a if i in (1, 2) else os.path.abspath(a)
                       for i, a in enumerate(argv[2:])]
    if len(argv) == 3 and argv[1] == 'plan':
        cmd_plan(argv[2])
    elif len(argv) in (6, 7) and argv[1] == 'build':
        cmd_build(*argv[2:])
    elif len(argv) == 7 and argv[1] == 'tree':
        sys.exit(cmd_tree(*argv[2:]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
