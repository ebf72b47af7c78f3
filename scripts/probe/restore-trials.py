#!/usr/bin/env python3
"""Where each Fig. 5.4 restoration trial's time went, from a run's logs.

Usage: scripts/probe/restore-trials.py DIR LOG

DIR is the --out directory of `corral bench durability` (it keeps every
member's log, e.g. corral-diskless-tree.s1.log); LOG is the bench's own
output (its stdout and stderr) saved to a file. For every corral leader
kill the bench logged ("killing server ... rss=") it prints, in ms after
the kill: when each survivor logged "transport: disconnected" (the
killed process's sockets closed), when each wrote its checkpoint (entries,
time taken), when a leader was established, and when the bench's writer
reconnected. ZooKeeper's trials are skipped (its logs differ).
"""
import datetime
import glob
import re
import sys


def ts(line):
    m = re.match(r'time=(\S+)Z', line)
    return datetime.datetime.fromisoformat(m.group(1)) if m else None


def main(d, logfile):
    kills, cur = [], None
    for line in open(logfile):
        m = re.search(r'msg="killing the leader" config=(\S+) znodes=(\d+)', line)
        if m:
            cur = (m.group(1), int(m.group(2)))
        m = re.search(r'msg="killing server" target=corral id=(\d+) pid=\d+ rss="(\d+) kB"', line)
        if m and cur:
            kills.append({'cfg': cur[0], 'n': cur[1], 'id': int(m.group(1)),
                          'rss': int(m.group(2)) // 1024, 't0': ts(line), 'write': None})
        if 'msg="writer reconnected"' in line and kills and kills[-1]['write'] is None:
            kills[-1]['write'] = ts(line)
    logs = {}
    for f in glob.glob(d + '/corral-*-tree.s*.log'):
        m = re.search(r'/(corral-\w+)-tree\.s(\d+)\.log$', f)
        logs.setdefault(m.group(1), {})[int(m.group(2))] = [(ts(l), l) for l in open(f) if ts(l)]
    for k in kills:
        t0 = k['t0']
        ms = lambda t: (t - t0).total_seconds() * 1000
        notice, ckpt, est = {}, {}, None
        for sid, lines in logs.get(k['cfg'], {}).items():
            if sid == k['id']:
                continue
            for t, l in lines:
                if t < t0:
                    continue
                if (t - t0).total_seconds() > 2:
                    break
                if 'transport: disconnected' in l and sid not in notice:
                    notice[sid] = ms(t)
                m = re.search(r'checkpoint written.*entriesAfter=(\d+) took=(\S+)', l)
                if m and sid not in ckpt:
                    ckpt[sid] = (ms(t), m.group(1), m.group(2))
                if 'leader established' in l and est is None:
                    est = ms(t)
        fmt = lambda v: '%.0f' % v if v is not None else '-'
        print(k['cfg'], k['n'], 'killed', k['id'], 'rss_MB', k['rss'],
              'notice', [fmt(v) for v in notice.values()],
              'ckpt', [(fmt(v[0]), v[1], v[2]) for v in ckpt.values()],
              'established', fmt(est), 'writer_back', fmt(ms(k['write']) if k['write'] else None))


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
