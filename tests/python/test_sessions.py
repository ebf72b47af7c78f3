"""Session behaviour through kazoo: reconnecting with the same session after
a server restart, and expiry of a client cut off from the server."""

import threading
import time

from kazoo.client import KazooClient
from kazoo.protocol.states import EventType, KazooState

from zkserver import TcpProxy

WAIT = 30.0


class StateLog:
    def __init__(self):
        self.states = []
        self.cond = threading.Condition()

    def __call__(self, state):
        with self.cond:
            self.states.append(state)
            self.cond.notify_all()

    def wait_for(self, seq):
        """Wait until the recorded states end with seq (a list)."""
        with self.cond:
            ok = self.cond.wait_for(lambda: self.states[-len(seq):] == seq, WAIT)
            assert ok, "states %s, want them to end with %s" % (self.states, seq)


def test_reconnect_after_restart_keeps_session(fresh_server):
    log = StateLog()
    c = KazooClient(hosts=fresh_server.hosts, timeout=10.0)
    c.add_listener(log)
    c.start(timeout=WAIT)
    try:
        session = c.client_id[0]
        c.create("/r", b"v")
        c.create("/r/eph", ephemeral=True)
        fresh_server.restart()
        log.wait_for([KazooState.CONNECTED, KazooState.SUSPENDED, KazooState.CONNECTED])
        assert KazooState.LOST not in log.states
        assert c.client_id[0] == session
        assert c.get("/r")[0] == b"v"
        assert c.exists("/r/eph").ephemeralOwner == session
        # SIGKILL too: the tree and the session come back from disk.
        c.set("/r", b"v2")
        fresh_server.kill()
        fresh_server.start()
        log.wait_for([KazooState.SUSPENDED, KazooState.CONNECTED])
        assert KazooState.LOST not in log.states
        assert c.get("/r")[0] == b"v2"
        assert c.exists("/r/eph") is not None
    finally:
        c.stop()
        c.close()


def test_session_expiry(make_client, server):
    watcher = make_client()
    watcher.ensure_path("/expiry")
    proxy = TcpProxy(server.addr)
    log = StateLog()
    c = KazooClient(hosts=proxy.hosts, timeout=4.0)
    c.add_listener(log)
    c.start(timeout=WAIT)
    try:
        assert c._session_timeout == 4000  # negotiated
        old = c.client_id[0]
        path = c.create("/expiry/e-", ephemeral=True, sequence=True)
        deleted = threading.Event()

        def on_event(ev):
            if ev.type == EventType.DELETED:
                deleted.set()

        assert watcher.exists(path, watch=on_event) is not None
        # Cut the client off: the server hears nothing from it and expires
        # the session, deleting its ephemeral.
        proxy.cut()
        assert deleted.wait(WAIT), "ephemeral of the cut-off session not deleted"
        assert watcher.exists(path) is None
        # Reconnected, the client learns the session is gone (LOST), and
        # kazoo starts a new one.
        proxy.heal()
        log.wait_for([KazooState.LOST, KazooState.CONNECTED])
        deadline = time.monotonic() + WAIT
        while c.client_id is None or c.client_id[0] == old:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert c.exists("/expiry") is not None
    finally:
        c.stop()
        c.close()
        proxy.close()
