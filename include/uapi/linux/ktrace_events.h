/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ktrace: names and print formats of the groups and events.
 *
 * Not a header of its own: a table for tools to include after defining
 *
 *	KTRACE_GROUP(group)
 *	KTRACE_EVENT(group, name, nr_cont, format)
 *
 * The codes are KTRACE_GRP_<group> and KTRACE_<group>_<name> from
 * <linux/ktrace.h>, so an entry without a code does not compile.
 * @nr_cont is how many continuation records follow the event.  @format
 * prints the arguments in order (arg1, arg2, then two per continuation
 * record) with %u, %d and %x for one argument and %llx and %llu for two,
 * low word first; %T is a thread id that tools may print with its name,
 * and %s takes the remaining arguments as a NUL-padded string (four bytes
 * an argument, little-endian).
 */
KTRACE_GROUP(sched)
KTRACE_GROUP(thread)
KTRACE_GROUP(fault)
KTRACE_GROUP(irq)
KTRACE_GROUP(softirq)
KTRACE_GROUP(syscall)
KTRACE_GROUP(net)
KTRACE_GROUP(block)
KTRACE_GROUP(fs)
KTRACE_GROUP(signal)
KTRACE_GROUP(timer)
KTRACE_GROUP(user)
KTRACE_GROUP(func)
KTRACE_GROUP(mm)
KTRACE_GROUP(ipc)
KTRACE_GROUP(lock)
KTRACE_GROUP(power)
KTRACE_GROUP(workqueue)

KTRACE_EVENT(sched,   switch,   0, "context switch from task %T to task %T")
KTRACE_EVENT(sched,   wakeup,   0, "wakeup of task %T on cpu %u")
KTRACE_EVENT(sched,   migrate,  0, "migrate task %T to cpu %u")
KTRACE_EVENT(thread,  fork,     0, "fork: task %T created task %u")
KTRACE_EVENT(thread,  exec,     0, "exec by task %T (old tid %u)")
KTRACE_EVENT(thread,  exit,     0, "exit of task %T, code %d")
KTRACE_EVENT(thread,  name,     2, "task %u of process %u is named %s")
KTRACE_EVENT(fault,   page,     1, "page fault by task %T, flags %x (1 user, 2 write) at %llx")
KTRACE_EVENT(fault,   trap,     0, "trap %u, error code %x")
KTRACE_EVENT(irq,     entry,    0, "irq %u entry, vector %u")
KTRACE_EVENT(irq,     exit,     0, "irq %u exit, vector %u")
KTRACE_EVENT(irq,     nmi,      1, "nmi on cpu %u, back-to-back %u, at %llx")
KTRACE_EVENT(softirq, entry,    0, "softirq %u entry")
KTRACE_EVENT(softirq, exit,     0, "softirq %u exit")
KTRACE_EVENT(softirq, raise,    0, "softirq %u raised")
KTRACE_EVENT(syscall, entry,    0, "syscall %u entry, arg0 %x")
KTRACE_EVENT(syscall, exit,     0, "syscall %u exit, return %d")
KTRACE_EVENT(net,     xmit,     0, "transmit %u bytes on ifindex %u")
KTRACE_EVENT(net,     recv,     0, "receive %u bytes on ifindex %u")
KTRACE_EVENT(block,   issue,    1, "block issue dev %x, %u bytes at sector %llu")
KTRACE_EVENT(block,   complete, 1, "block complete dev %x, %u bytes at sector %llu")
KTRACE_EVENT(signal,  deliver,  0, "signal %u delivered to task %T")
KTRACE_EVENT(timer,   expire,   1, "timer expired, flags %x, cpu %u, function %llx")
KTRACE_EVENT(user,    mark,     0, "user mark %u %u")
KTRACE_EVENT(func,    entry,    1, "enter %llx from %llx")
KTRACE_EVENT(func,    exit,     0, "exit %llx")
KTRACE_EVENT(func,    enter,    1, "enter fn_lo %x hi %x site_lo %x sp %x")
KTRACE_EVENT(func,    leave,    0, "leave fn_lo %x sp %x")
