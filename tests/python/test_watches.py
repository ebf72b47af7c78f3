"""Watches through kazoo: one-shot watches, DataWatch, ChildrenWatch."""

import queue
import threading

from kazoo.protocol.states import EventType

WAIT = 20.0  # generous bound; nothing asserts on timing


def test_one_shot_watches(zk, make_client, base):
    other = make_client()
    events = queue.Queue()
    assert zk.exists(base + "/n", watch=events.put) is None
    other.create(base + "/n", b"1")
    ev = events.get(timeout=WAIT)
    assert ev.type == EventType.CREATED and ev.path == base + "/n"

    zk.get(base + "/n", watch=events.put)
    other.set(base + "/n", b"2")
    ev = events.get(timeout=WAIT)
    assert ev.type == EventType.CHANGED and ev.path == base + "/n"

    zk.get_children(base, watch=events.put)
    other.create(base + "/kid")
    ev = events.get(timeout=WAIT)
    assert ev.type == EventType.CHILD and ev.path == base

    zk.exists(base + "/n", watch=events.put)
    other.delete(base + "/n")
    ev = events.get(timeout=WAIT)
    assert ev.type == EventType.DELETED and ev.path == base + "/n"

    # One-shot: no further event for a later change. A round trip on zk
    # after the change would come after any notification for it.
    other.create(base + "/n")
    zk.sync(base)
    assert events.empty()


def test_data_watch(zk, make_client, base):
    other = make_client()
    zk.create(base + "/d", b"v0")
    seen = []
    cond = threading.Condition()

    @zk.DataWatch(base + "/d")
    def watch(data, stat):
        with cond:
            seen.append(data)
            cond.notify_all()

    def wait_for(value):
        with cond:
            assert cond.wait_for(lambda: seen and seen[-1] == value, WAIT), seen

    wait_for(b"v0")
    other.set(base + "/d", b"v1")
    wait_for(b"v1")
    other.set(base + "/d", b"v2")
    wait_for(b"v2")
    other.delete(base + "/d")
    wait_for(None)
    assert seen[0] == b"v0"


def test_children_watch(zk, make_client, base):
    other = make_client()
    seen = []
    cond = threading.Condition()

    @zk.ChildrenWatch(base)
    def watch(children):
        with cond:
            seen.append(sorted(children))
            cond.notify_all()

    def wait_for(value):
        with cond:
            assert cond.wait_for(lambda: seen and seen[-1] == value, WAIT), seen

    wait_for([])
    other.create(base + "/a")
    wait_for(["a"])
    other.create(base + "/b", ephemeral=True)
    wait_for(["a", "b"])
    other.stop()
    other.close()
    wait_for(["a"])
