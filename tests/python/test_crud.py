"""CRUD with stats, ephemeral and sequential nodes, errors (kazoo)."""

import pytest
from kazoo.exceptions import (BadArgumentsError, BadVersionError, NoAuthError,
                              NoChildrenForEphemeralsError, NodeExistsError, NoNodeError,
                              NotEmptyError)
from kazoo.security import OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, make_acl


def test_create_get_set_delete(zk, base):
    path = zk.create(base + "/n", b"v0")
    assert path == base + "/n"
    data, st = zk.get(path)
    assert data == b"v0"
    assert st.version == 0 and st.cversion == 0 and st.aversion == 0
    assert st.czxid == st.mzxid == st.pzxid
    assert st.dataLength == 2 and st.numChildren == 0 and st.ephemeralOwner == 0
    assert st.ctime == st.mtime > 0

    st1 = zk.set(path, b"v1", version=0)
    assert st1.version == 1 and st1.mzxid > st.mzxid and st1.czxid == st.czxid
    with pytest.raises(BadVersionError):
        zk.set(path, b"v2", version=0)
    assert zk.set(path, b"v2").version == 2  # version -1: any

    assert zk.exists(path).version == 2
    assert zk.exists(base + "/missing") is None
    with pytest.raises(NoNodeError):
        zk.get(base + "/missing")
    with pytest.raises(NodeExistsError):
        zk.create(path)
    with pytest.raises(NoNodeError):
        zk.create(base + "/missing/child")
    with pytest.raises(BadArgumentsError):
        zk.create(path + "/\x01x", b"")  # a control character

    zk.create(path + "/kid")
    with pytest.raises(NotEmptyError):
        zk.delete(path)
    with pytest.raises(BadVersionError):
        zk.delete(path + "/kid", version=5)
    zk.delete(path + "/kid", version=0)
    zk.delete(path, version=2)
    assert zk.exists(path) is None
    with pytest.raises(NoNodeError):
        zk.delete(path)


def test_create_include_data_uses_create2(zk, base):
    path, st = zk.create(base + "/c2", b"abc", include_data=True)
    assert path == base + "/c2"
    assert st.dataLength == 3 and st.version == 0 and st.czxid == st.mzxid


def test_null_data(zk, base):
    # kazoo sends value=None as a null buffer (length -1).
    zk.create(base + "/null", None)
    data, st = zk.get(base + "/null")
    assert data in (b"", None) and st.dataLength == 0


def test_children_and_parent_stat(zk, base):
    for name in ("b", "a", "c"):
        zk.create(base + "/" + name)
    assert sorted(zk.get_children(base)) == ["a", "b", "c"]
    kids, st = zk.get_children(base, include_data=True)
    assert sorted(kids) == ["a", "b", "c"]
    assert st.numChildren == 3 and st.cversion == 3
    zk.delete(base + "/b")
    st = zk.exists(base)
    assert st.numChildren == 2 and st.cversion == 4
    with pytest.raises(NoNodeError):
        zk.get_children(base + "/missing")


def test_ensure_path_and_makepath(zk, base):
    zk.ensure_path(base + "/x/y/z")
    assert zk.exists(base + "/x/y/z") is not None
    zk.create(base + "/p/q/r", b"deep", makepath=True)
    assert zk.get(base + "/p/q/r")[0] == b"deep"
    zk.delete(base + "/p", recursive=True)
    assert zk.exists(base + "/p") is None


def test_ephemeral_and_sequential(zk, make_client, base):
    other = make_client()
    e = zk.create(base + "/e", ephemeral=True)
    assert zk.exists(e).ephemeralOwner == zk.client_id[0]
    with pytest.raises(NoChildrenForEphemeralsError):
        zk.create(e + "/kid")

    s0 = zk.create(base + "/s-", sequence=True)
    s1 = zk.create(base + "/s-", ephemeral=True, sequence=True)
    # The suffix is the parent's child-create counter, 10 digits.
    assert s0 == base + "/s-0000000001"
    assert s1 == base + "/s-0000000002"
    assert zk.exists(s1).ephemeralOwner == zk.client_id[0]

    other_e = other.create(base + "/oe", ephemeral=True)
    zk.stop()
    zk.close()
    # The stopped client's ephemerals are gone; the other's remain.
    kids = sorted(other.get_children(base))
    assert kids == ["oe", "s-0000000001"]
    assert other.exists(other_e).ephemeralOwner == other.client_id[0]


def test_acls(zk, base):
    path = zk.create(base + "/a")
    acl, st = zk.get_acls(path)
    assert list(acl) == list(OPEN_ACL_UNSAFE) and st.aversion == 0
    read_admin = [make_acl("world", "anyone", read=True, admin=True)]
    st = zk.set_acls(path, read_admin, version=0)
    assert st.aversion == 1 and st.version == 0
    with pytest.raises(BadVersionError):
        zk.set_acls(path, OPEN_ACL_UNSAFE, version=0)
    acl, _ = zk.get_acls(path)
    assert list(acl) == read_admin
    with pytest.raises(NoAuthError):
        zk.set(path, b"no WRITE")
    # Without ADMIN, setACL is refused before its version is looked at.
    zk.set_acls(path, READ_ACL_UNSAFE)
    with pytest.raises(NoAuthError):
        zk.set_acls(path, OPEN_ACL_UNSAFE, version=0)


def test_sync_and_initial_tree(zk, base):
    assert zk.sync(base) == base
    assert "zookeeper" in zk.get_children("/")
    assert sorted(zk.get_children("/zookeeper")) == ["config", "quota"]
    acl, _ = zk.get_acls("/zookeeper/config")
    assert list(acl) == list(READ_ACL_UNSAFE)
