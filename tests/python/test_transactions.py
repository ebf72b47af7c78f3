"""kazoo transactions (multi, PROTOCOL §9)."""

from kazoo.exceptions import BadVersionError, NodeExistsError, RolledBackError, RuntimeInconsistency


def test_commit_success(zk, base):
    zk.create(base + "/x", b"x")
    t = zk.transaction()
    t.create(base + "/a", b"a")
    t.set_data(base + "/x", b"x2", version=0)
    t.check(base + "/x", 1)
    t.delete(base + "/a")
    t.create(base + "/s-", sequence=True)
    results = t.commit()
    assert results[0] == base + "/a"
    assert results[1].version == 1
    assert results[2] is True and results[3] is True
    assert results[4] == base + "/s-0000000002"
    assert zk.get(base + "/x")[0] == b"x2"
    assert zk.exists(base + "/a") is None


def test_commit_with_failing_check_rolls_back(zk, base):
    zk.create(base + "/x", b"x")
    t = zk.transaction()
    t.create(base + "/never", b"n")
    t.check(base + "/x", 7)
    t.set_data(base + "/x", b"no")
    results = t.commit()
    # Ops before the failure are rolled back (code 0), the failing op
    # carries its error, the ops after it RuntimeInconsistency (-2).
    assert [type(r) for r in results] == [RolledBackError, BadVersionError, RuntimeInconsistency]
    assert zk.exists(base + "/never") is None
    assert zk.get(base + "/x") == (b"x", zk.exists(base + "/x"))
    assert zk.exists(base + "/x").version == 0


def test_commit_with_existing_node(zk, base):
    zk.create(base + "/dup")
    t = zk.transaction()
    t.create(base + "/fresh")
    t.create(base + "/dup")
    results = t.commit()
    assert [type(r) for r in results] == [RolledBackError, NodeExistsError]
    assert zk.exists(base + "/fresh") is None
