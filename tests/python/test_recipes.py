"""kazoo recipes against the server: they exercise sequential ephemerals,
watches, transactions and versions the way applications do."""

import threading
import time

import pytest

WAIT = 30.0


def test_lock(make_client, base):
    a, b = make_client(), make_client()
    lock_a = a.Lock(base + "/lock", "a")
    lock_b = b.Lock(base + "/lock", "b")
    assert lock_a.acquire(timeout=WAIT)
    assert not lock_b.acquire(blocking=False)
    assert lock_b.contenders() == ["a"]

    got = threading.Event()

    def take():
        if lock_b.acquire(timeout=WAIT):
            got.set()

    th = threading.Thread(target=take, daemon=True)
    th.start()
    # b queues behind a; releasing a wakes b through its watch.
    deadline = time.monotonic() + WAIT
    while len(lock_a.contenders()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lock_a.contenders() == ["a", "b"]
    lock_a.release()
    th.join(WAIT)
    assert got.is_set()
    lock_b.release()


def test_lock_released_when_holder_session_ends(make_client, base):
    a, b = make_client(), make_client()
    assert a.Lock(base + "/lock").acquire(timeout=WAIT)
    lock_b = b.Lock(base + "/lock")
    a.stop()
    a.close()
    assert lock_b.acquire(timeout=WAIT)
    lock_b.release()


def test_read_write_lock(make_client, base):
    a, b, c = make_client(), make_client(), make_client()
    r1 = a.ReadLock(base + "/rw")
    r2 = b.ReadLock(base + "/rw")
    w = c.WriteLock(base + "/rw")
    assert r1.acquire(timeout=WAIT) and r2.acquire(timeout=WAIT)
    assert not w.acquire(blocking=False)
    r1.release()
    r2.release()
    assert w.acquire(timeout=WAIT)
    w.release()


def test_semaphore(make_client, base):
    a, b, c = make_client(), make_client(), make_client()
    s1 = a.Semaphore(base + "/sem", max_leases=2)
    s2 = b.Semaphore(base + "/sem", max_leases=2)
    s3 = c.Semaphore(base + "/sem", max_leases=2)
    assert s1.acquire(timeout=WAIT) and s2.acquire(timeout=WAIT)
    assert not s3.acquire(blocking=False)
    s1.release()
    assert s3.acquire(timeout=WAIT)
    s2.release()
    s3.release()


def test_election(make_client, base):
    a, b = make_client(), make_client()
    elected = []
    done = threading.Event()
    release = threading.Event()

    def lead(name):
        elected.append(name)
        done.set()
        release.wait(WAIT)

    ea = a.Election(base + "/election", "a")
    eb = b.Election(base + "/election", "b")
    ta = threading.Thread(target=ea.run, args=(lead, "a"), daemon=True)
    ta.start()
    assert done.wait(WAIT)
    tb = threading.Thread(target=eb.run, args=(lead, "b"), daemon=True)
    tb.start()
    deadline = time.monotonic() + WAIT
    while len(ea.contenders()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ea.contenders() == ["a", "b"]
    assert elected == ["a"]
    done.clear()
    release.set()  # a resigns; b is elected
    ta.join(WAIT)
    assert done.wait(WAIT)
    tb.join(WAIT)
    assert elected == ["a", "b"]


def test_counter(make_client, base):
    clients = [make_client() for _ in range(3)]
    counters = [c.Counter(base + "/count") for c in clients]

    def bump(counter):
        for _ in range(20):
            counter += 1

    threads = [threading.Thread(target=bump, args=(c,), daemon=True) for c in counters]
    for th in threads:
        th.start()
    for th in threads:
        th.join(WAIT)
    assert counters[0].value == 60
    f = clients[0].Counter(base + "/float", default=0.0)
    f += 2.5
    f -= 1.0
    assert f.value == 1.5


def test_queue(make_client, base):
    a, b = make_client(), make_client()
    qa = a.Queue(base + "/q")
    qb = b.Queue(base + "/q")
    for i in range(5):
        qa.put(b"item%d" % i)
    qa.put(b"urgent", priority=1)
    assert len(qb) == 6
    assert qb.get() == b"urgent"
    assert [qb.get() for _ in range(5)] == [b"item%d" % i for i in range(5)]
    assert qb.get() is None


def test_locking_queue(make_client, base):
    a, b = make_client(), make_client()
    qa = a.LockingQueue(base + "/lq")
    qb = b.LockingQueue(base + "/lq")
    qa.put_all([b"one", b"two"])
    assert len(qb) == 2
    assert qb.get(timeout=WAIT) == b"one"
    # qb holds "one"; a second consumer gets the next item.
    assert qa.get(timeout=WAIT) == b"two"
    assert qb.consume()
    assert qa.release()  # gives "two" back
    assert qb.get(timeout=WAIT) == b"two"
    assert qb.consume()
    assert len(qa) == 0


def test_barrier(make_client, base):
    a, b = make_client(), make_client()
    barrier = a.Barrier(base + "/barrier")
    barrier.create()
    passed = threading.Event()

    def wait():
        if b.Barrier(base + "/barrier").wait(timeout=WAIT):
            passed.set()

    th = threading.Thread(target=wait, daemon=True)
    th.start()
    assert not passed.wait(0.5)  # not asserted on timing: it must still be blocked
    barrier.remove()
    th.join(WAIT)
    assert passed.is_set()


def test_double_barrier(make_client, base):
    n = 3
    clients = [make_client() for _ in range(n)]
    entered, left = [], []
    lock = threading.Lock()
    # Members leave only once every member has entered. kazoo's enter()
    # sets its watch for the ready node after creating its own node; a
    # member that leaves at once deletes the ready node and its own node,
    # and a member whose watch comes after that waits forever, on any
    # server (a race in the recipe, not in the server).
    all_in = threading.Barrier(n, timeout=WAIT)

    # Where each member is, for the failure message: a member stuck in
    # enter or leave waits on a watch that did not fire.
    stage = ["starting"] * n

    def member(c, i):
        db = c.DoubleBarrier(base + "/db", n, identifier="m%d" % i)
        stage[i] = "entering as " + db.node_name
        db.enter()
        with lock:
            entered.append(i)
        stage[i] = "entered"
        all_in.wait()
        stage[i] = "leaving"
        db.leave()
        with lock:
            left.append(i)
        stage[i] = "left"

    threads = [threading.Thread(target=member, args=(c, i), daemon=True) for i, c in enumerate(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(WAIT)
    if any(th.is_alive() for th in threads):
        zk = make_client()
        try:
            nodes = sorted(zk.get_children(base + "/db"))
        except Exception as e:  # report what can be seen
            nodes = repr(e)
        pytest.fail("members still running: stages %s, barrier nodes now %s" % (stage, nodes))
    assert sorted(entered) == list(range(n)) and sorted(left) == list(range(n))


@pytest.mark.parametrize("kind", ["Party", "ShallowParty"])
def test_party(make_client, base, kind):
    a, b = make_client(), make_client()
    pa = getattr(a, kind)(base + "/party", "alice")
    pb = getattr(b, kind)(base + "/party", "bob")
    pa.join()
    pb.join()
    assert sorted(pa) == ["alice", "bob"] and len(pb) == 2
    pb.leave()
    assert list(pa) == ["alice"]
    a.stop()
    a.close()
    assert len(pb) == 0
