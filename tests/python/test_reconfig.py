"""kazoo's own reconfig tests (kazoo.tests.test_client.TestReconfig), run
unchanged against a reconfig-enabled 3-member ensemble of the target.

kazoo's harness would start Apache ZooKeeper itself; the subclass below
points it at the ensemble this module starts instead (its cluster is
the running members, its hosts their client addresses).
"""

import importlib.util
import sys
import threading
import types

import pytest
from kazoo.client import KazooClient

for _name in ("OpenSSL", "jks"):
    # kazoo.testing imports pyOpenSSL and pyjks at module level only to
    # make TLS key stores for the Java cluster it would launch, which is
    # not launched here: empty stand-ins let kazoo's test module import.
    if importlib.util.find_spec(_name) is None:
        sys.modules[_name] = types.ModuleType(_name)

import kazoo.tests.test_client as kazoo_client_tests  # noqa: E402

from zkserver import start_ensemble


@pytest.fixture(scope="module")
def reconfig_ensemble(target, tmp_path_factory):
    dirs = [str(tmp_path_factory.mktemp("member%d" % (i + 1))) for i in range(3)]
    servers = start_ensemble(target, dirs, extra=["reconfigEnabled=true"])
    yield servers
    for s in servers:
        s.close()


@pytest.fixture
def bind_ensemble(request, reconfig_ensemble):
    request.cls.members = reconfig_ensemble


class _Member:
    """What kazoo's harness asks of a cluster member."""

    def __init__(self, server):
        self.address = server.hosts
        self.running = server.running()


@pytest.mark.usefixtures("bind_ensemble")
class TestKazooReconfig(kazoo_client_tests.TestReconfig):
    members = None

    @property
    def cluster(self):
        return [_Member(s) for s in self.members]

    @classmethod
    def tearDownClass(cls):
        # kazoo's would stop its own Java cluster; the module's fixture
        # stops this ensemble.
        pass


def test_config_watch_fires(reconfig_ensemble):
    """getConfig with a watch: the watch fires when a reconfig commits, and
    the new text lists the observer added and its version."""
    hosts = ",".join(s.hosts for s in reconfig_ensemble)
    admin = KazooClient(hosts, auth_data=[("digest", "super:test")])
    watcher = KazooClient(reconfig_ensemble[1].hosts)
    admin.start()
    watcher.start()
    try:
        fired = threading.Event()
        data, stat = watcher.get("/zookeeper/config", watch=lambda ev: fired.set())
        joining = "server.50=127.0.0.1:1:2:observer;127.0.0.1:3"
        new, nstat = admin.reconfig(joining=joining, leaving=None, new_members=None)
        assert fired.wait(30), "watch on /zookeeper/config did not fire"
        assert joining.encode() in new
        assert new.endswith(("version=%x" % nstat.mzxid).encode())
        watcher.sync("/zookeeper/config")
        got, _ = watcher.get("/zookeeper/config")
        assert got == new
        admin.reconfig(joining=None, leaving="50", new_members=None)
    finally:
        admin.stop()
        watcher.stop()
