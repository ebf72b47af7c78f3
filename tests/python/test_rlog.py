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
