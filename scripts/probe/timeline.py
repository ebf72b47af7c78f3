#!/usr/bin/env python3
"""Where a sequential write's time goes, from probe marks (internal/probe).

Usage:
  timeline.py START LABEL=FILE [LABEL=FILE...]            median offsets per stage
  timeline.py --ops N,M START LABEL=FILE [LABEL=FILE...]  every mark of ops N and M
  timeline.py --flushes LEADER START LABEL=FILE [LABEL=FILE...]
      when the leader's first and second flushes come after a proposal

Each FILE is one process's probe-PID.txt ("unix-nanos stage zxid" lines);
LABEL names the process in the output. The label that starts with C is the
server the client talks to: an op starts at each of its START marks (for
example c-write-rx) and runs until the next, so the load must be one
request at a time (bench run --workload seqcreate). The first fifth of the
ops is skipped as warm-up. Stages whose first mark in an op falls in fewer
than half the ops are left out of the medians.

--flushes takes, for each proposal LEADER sends to two followers (two
node-send-PROPOSAL marks in a row), its next two tr-flushed marks: the
first and the second follower's copy leaving (other messages the
leader flushes in between count too, so this is an upper estimate of
the second), and prints their median and p90 offsets from the
proposal, over the ops after the first fifth.
"""
import collections
import statistics
import sys


def load(args):
    ev = []
    labels = []
    for a in args:
        lab, path = a.split("=", 1)
        labels.append(lab)
        with open(path) as f:
            for line in f:
                t, st, z = line.split()
                ev.append((int(t), lab, st, int(z)))
    ev.sort()
    return labels, ev


def split_ops(start, labels, ev):
    client = [l for l in labels if l.startswith("C")]
    if not client:
        sys.exit("timeline: no label starts with C (the client's server)")
    ops, cur = [], None
    for e in ev:
        if e[1] == client[0] and e[2] == start:
            if cur:
                ops.append(cur)
            cur = [e]
        elif cur is not None:
            cur.append(e)
    return ops


def medians(ops):
    offs = collections.defaultdict(list)
    for op in ops:
        t0, seen = op[0][0], set()
        for t, lab, st, _ in op:
            if (lab, st) not in seen:
                seen.add((lab, st))
                offs[(lab, st)].append((t - t0) / 1000)
    rows = sorted((statistics.median(v), k, len(v)) for k, v in offs.items() if len(v) > len(ops) / 2)
    print("ops", len(ops))
    prev = 0.0
    for m, (lab, st), n in rows:
        print("%8.1f us (+%6.1f)  %-4s %-28s n=%d" % (m, m - prev, lab, st, n))
        prev = m


def show(ops, which):
    for i in which:
        op = ops[i]
        t0 = op[0][0]
        print("--- op", i)
        for t, lab, st, z in op:
            print("%8.1f %-4s %-28s %x" % ((t - t0) / 1000, lab, st, z))


def flushes(ops, leader):
    first, second = [], []
    for op in ops:
        marks = [(t, st) for t, lab, st, _ in op if lab == leader]
        for i in range(len(marks) - 1):
            if marks[i][1] == marks[i + 1][1] == "node-send-PROPOSAL":
                fl = [t for t, st in marks[i + 2:] if st == "tr-flushed"][:2]
                if len(fl) == 2:
                    first.append((fl[0] - marks[i][0]) / 1000)
                    second.append((fl[1] - marks[i][0]) / 1000)
                break
    if not first:
        sys.exit("timeline: no proposal to two followers from %s" % leader)

    def q(v, p):
        return sorted(v)[int(len(v) * p)]
    print("proposals %d: first flush p50 %.1f us p90 %.1f us, second flush p50 %.1f us p90 %.1f us"
          % (len(first), q(first, .5), q(first, .9), q(second, .5), q(second, .9)))


def main():
    args = sys.argv[1:]
    which = None
    leader = None
    if args and args[0] == "--ops":
        which = [int(x) for x in args[1].split(",")]
        args = args[2:]
    elif args and args[0] == "--flushes" and len(args) > 1:
        leader = args[1]
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    labels, ev = load(args[1:])
    ops = split_ops(args[0], labels, ev)
    ops = ops[len(ops) // 5:]
    if not ops:
        sys.exit("timeline: no ops found")
    if which:
        show(ops, which)
    elif leader:
        flushes(ops, leader)
    else:
        medians(ops)


if __name__ == "__main__":
    main()
