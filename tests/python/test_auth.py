"""Digest auth and ACLs through kazoo (PROTOCOL §12)."""

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import AuthFailedError, InvalidACLError, NoAuthError
from kazoo.security import make_digest_acl, make_digest_acl_credential, CREATOR_ALL_ACL


def test_digest_acl_denies_others(make_client, base):
    alice = make_client(auth_data=[("digest", "alice:secret")])
    acl = make_digest_acl("alice", "secret", all=True)
    assert acl.id.id == "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="
    alice.create(base + "/secret", b"s", acl=[acl])

    anon = make_client()
    with pytest.raises(NoAuthError):
        anon.get(base + "/secret")
    with pytest.raises(NoAuthError):
        anon.set(base + "/secret", b"x")
    with pytest.raises(NoAuthError):
        anon.create(base + "/secret/kid")

    mallory = make_client(auth_data=[("digest", "alice:wrong")])
    with pytest.raises(NoAuthError):
        mallory.get(base + "/secret")

    # Auth added after connecting works too.
    anon.add_auth("digest", "alice:secret")
    assert anon.get(base + "/secret")[0] == b"s"
    assert alice.get(base + "/secret")[0] == b"s"


def test_creator_acl(make_client, base):
    bob = make_client(auth_data=[("digest", "bob:pw")])
    bob.create(base + "/mine", acl=CREATOR_ALL_ACL)
    acl, _ = bob.get_acls(base + "/mine")
    assert [a.id.id for a in acl] == [make_digest_acl_credential("bob", "pw")]
    anon = make_client()
    with pytest.raises(NoAuthError):
        anon.get(base + "/mine")
    # CREATOR_ALL_ACL without any authenticated id is invalid.
    with pytest.raises(InvalidACLError):
        anon.create(base + "/nobody", acl=CREATOR_ALL_ACL)


def test_super_user(make_client, base):
    alice = make_client(auth_data=[("digest", "alice:secret")])
    alice.create(base + "/locked", b"l", acl=[make_digest_acl("alice", "secret", read=True)])
    root = make_client(auth_data=[("digest", "super:test")])
    assert root.get(base + "/locked")[0] == b"l"
    root.set(base + "/locked", b"changed")
    root.delete(base + "/locked")


def test_unknown_scheme_fails_auth(server):
    c = KazooClient(hosts=server.hosts, timeout=10.0)
    c.start(timeout=30)
    try:
        with pytest.raises(AuthFailedError):
            c.add_auth("nosuchscheme", "x")
    finally:
        c.stop()
        c.close()
