"""Logs in the ensemble (rlog.root) seen through kazoo: a log is a znode,
a sequential create under it appends (payloads above 1 KiB go to each
member's data log), getData reads an entry back on every member, also
after a member's restart. corral only: ZooKeeper has no rlog.root.
"""

import os
import subprocess

import pytest
from kazoo.client import KazooClient

from zkserver import READY_TIMEOUT, ServerProcess, free_port


def _start_nowait(srv):
    log = open(srv.log_path, "ab")
    srv.proc = subprocess.Popen(srv._command(), cwd=srv.dir, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()


@pytest.fixture
def ensemble(target, tmp_path_factory):
    if target.kind != "corral":
        pytest.skip("rlog.root is corral's")
    members = [ServerProcess(target, str(tmp_path_factory.mktemp("member"))) for _ in range(3)]
    peers = []
    for i in range(len(members)):
        # Quorum and election ports: two more free ports per member.
        peers.append("server.%d=127.0.0.1:%d:%d" % (i + 1, free_port(), free_port()))
    for i, m in enumerate(members):
        with open(os.path.join(m.data_dir, "myid"), "w") as f:
            f.write("%d\n" % (i + 1))
        with open(m.cfg_path, "a") as f:
            f.write("\n".join(["initLimit=10", "syncLimit=5", "rlog.root=/logs"] + peers) + "\n")
    for m in members:
        _start_nowait(m)
    for m in members:
        m._wait_ready()
    yield members
    for m in members:
        m.close()


def _client(hosts):
    zk = KazooClient(hosts=hosts, timeout=10.0)
    zk.start(timeout=READY_TIMEOUT)
    return zk


def test_logs_are_znodes(ensemble):
    hosts = ",".join(m.hosts for m in ensemble)
    zk = _client(hosts)
    try:
        zk.create("/logs")
        zk.create("/logs/events")
        want = {}
        for i in range(6):
            payload = os.urandom(64 << 10) if i % 3 else b"small %d" % i
            path = zk.create("/logs/events/e-", payload, sequence=True)
            want[path] = payload
        assert sorted("/logs/events/" + c for c in zk.get_children("/logs/events")) == sorted(want)
    finally:
        zk.stop()
        zk.close()

    def read_all(member):
        c = _client(member.hosts)
        try:
            c.sync("/logs/events")
            for path, payload in want.items():
                data, stat = c.get(path)
                assert data == payload, path
                assert stat.data_length == len(payload), path
        finally:
            c.stop()
            c.close()

    for m in ensemble:
        read_all(m)
    ensemble[0].kill()
    ensemble[0].start()
    read_all(ensemble[0])


def _ctl(start, end, sealed=False):
    return b"zkrl1 start=%d end=%d sealed=%s" % (start, end, b"true" if sealed else b"false")


def _entry(log, off):
    return "%s/%020d" % (log, off)


def _append(zk, log, data, expect=None):
    """An append with an expected offset, as docs/design/rlog.md gives it:
    a transaction setting the log's control record with the version just
    read and creating the entry named by the old end."""
    raw, stat = zk.get(log)
    start, end, sealed = _parse(raw)
    if expect is not None and expect != end:
        return None, end
    t = zk.transaction()
    t.set_data(log, _ctl(start, end + len(data), sealed), version=stat.version)
    t.create(_entry(log, end), data)
    return t.commit(), end


def _parse(raw):
    f = dict(kv.split(b"=") for kv in raw.split()[1:])
    return int(f[b"start"]), int(f[b"end"]), f[b"sealed"] == b"true"


def test_offsets_through_kazoo(ensemble):
    """Appends with expected offsets, trim and seal through kazoo alone,
    on a log with a control record; what would break the log's offsets is
    refused with BadArguments, a stale version with BadVersion."""
    from kazoo.exceptions import BadArgumentsError, BadVersionError

    hosts = ",".join(m.hosts for m in ensemble)
    zk = _client(hosts)
    log = "/logs/k"
    try:
        zk.create("/logs")
        zk.create(log, _ctl(0, 0))
        first = os.urandom(4 << 10)  # above 1 KiB: each member's data log
        res, off = _append(zk, log, first, expect=0)
        assert off == 0 and res[1] == _entry(log, 0), res
        second = b"second"
        res, off = _append(zk, log, second, expect=len(first))
        assert off == len(first), res
        # A wrong expected offset: nothing sent, the end says where the log is.
        res, end = _append(zk, log, b"x", expect=0)
        assert res is None and end == len(first) + len(second)
        # A stale version (another writer appended meanwhile) fails whole.
        raw, stat = zk.get(log)
        t = zk.transaction()
        t.set_data(log, _ctl(0, end + 1), version=stat.version - 1)
        t.create(_entry(log, end), b"y")
        res = t.commit()
        assert isinstance(res[0], BadVersionError), res
        # A sequential create does not append to a log with offsets.
        with pytest.raises(BadArgumentsError):
            zk.create(log + "/e-", b"z", sequence=True)
        # Trim: the start moves up, then the entries below it go.
        raw, stat = zk.get(log)
        zk.set(log, _ctl(len(first), end), version=stat.version)
        with pytest.raises(BadArgumentsError):
            zk.set(log, _ctl(0, end))  # never down
        zk.delete(_entry(log, 0))
        with pytest.raises(BadArgumentsError):
            zk.delete(_entry(log, len(first)))  # above the start
        # Seal: appends are refused, the end stays.
        zk.set(log, _ctl(len(first), end, sealed=True))
        res, _ = _append(zk, log, b"late")
        assert isinstance(res[0], BadArgumentsError), res
        assert _parse(zk.get(log)[0]) == (len(first), end, True)
    finally:
        zk.stop()
        zk.close()

    for m in ensemble:
        c = _client(m.hosts)
        try:
            c.sync(log)
            assert sorted(c.get_children(log)) == ["%020d" % len(first)]
            data, stat = c.get(_entry(log, len(first)))
            assert data == second
        finally:
            c.stop()
            c.close()
