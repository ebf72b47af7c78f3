"""pytest fixtures for the kazoo end-to-end suite.

The target server is chosen by CORRAL_E2E_TARGET: "corral" (default; the
binary comes from CORRAL_BIN, which the Makefile builds, or is built here
with `go build` when CORRAL_BIN is unset) or "zookeeper" (Apache ZooKeeper
3.9.3 via tests/zookeeper-classpath.sh). Both start from the same zoo.cfg as
the Go harness (tests/harness/config.go). A missing prerequisite skips the
suite on a developer's machine and fails it when CI is set.
"""

import os
import re

import pytest
from kazoo.client import KazooClient

from zkserver import ServerProcess, TargetError, resolve_target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ci():
    v = os.environ.get("CI", "")
    return v not in ("", "false", "0")


@pytest.fixture(scope="session")
def target(tmp_path_factory):
    try:
        t = resolve_target(ROOT, str(tmp_path_factory.mktemp("bin")))
    except TargetError as e:
        if _ci():
            pytest.fail("e2e target unavailable (CI is set, so this fails): %s" % e)
        pytest.skip("e2e target unavailable: %s" % e)
    return t


def _start(target, tmp_path_factory, **cfg):
    srv = ServerProcess(target, str(tmp_path_factory.mktemp("server")), **cfg)
    srv.start()
    return srv


@pytest.fixture(scope="session")
def server(target, tmp_path_factory, request):
    """One server shared by the tests that do not stop or restart it."""
    srv = _start(target, tmp_path_factory)
    yield srv
    if request.session.testsfailed:
        print("shared server log (last lines):\n" + srv.log_tail(200))
    srv.close()


@pytest.fixture
def fresh_server(target, tmp_path_factory, request):
    """A server of the test's own, for tests that stop or restart it."""
    srv = _start(target, tmp_path_factory)
    yield srv
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        print("server log (last lines):\n" + srv.log_tail(200))
    srv.close()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture
def make_client(server):
    """Factory of started KazooClients (stopped and closed at teardown)."""
    clients = []

    def make(srv=None, **kwargs):
        srv = srv or server
        kwargs.setdefault("timeout", 10.0)
        c = KazooClient(hosts=srv.hosts, **kwargs)
        c.start(timeout=30)
        clients.append(c)
        return c

    yield make
    for c in clients:
        try:
            c.stop()
            c.close()
        except Exception:  # a client of a stopped server may fail to stop
            pass


@pytest.fixture
def zk(make_client):
    return make_client()


@pytest.fixture
def base(zk, request):
    """A fresh persistent node named after the test."""
    path = "/py_" + re.sub(r"[^A-Za-z0-9_]", "_", request.node.name)
    zk.create(path)
    return path
