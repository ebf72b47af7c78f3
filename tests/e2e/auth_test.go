package e2e

import (
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// TestAuth covers digest authentication, ACL enforcement and the super
// user (PROTOCOL §12).
func TestAuth(t *testing.T) {
	srv := env.Start(t)
	admin, _ := connect(t, srv)

	t.Run("DigestACL", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		alice, _ := connect(t, srv)
		mustOK(t, alice.AddAuth("digest", []byte("alice:secret")))
		acl := zk.DigestACL(zk.PermAll, "alice", "secret")
		if acl[0].ID != "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=" {
			t.Fatalf("go-zk digest = %q", acl[0].ID)
		}
		p := try(alice.Create(base+"/secret", []byte("s"), 0, acl)).must(t)

		anon, _ := connect(t, srv)
		_, _, err := anon.Get(p)
		wantErr(t, "get without auth", err, zk.ErrNoAuth)
		_, err = anon.Set(p, []byte("x"), -1)
		wantErr(t, "set without auth", err, zk.ErrNoAuth)
		_, _, err = anon.Children(p)
		wantErr(t, "children without auth", err, zk.ErrNoAuth)
		_, err = anon.Create(p+"/kid", nil, 0, zk.WorldACL(zk.PermAll))
		wantErr(t, "create child without auth", err, zk.ErrNoAuth)
		_, err = anon.SetACL(p, zk.WorldACL(zk.PermAll), -1)
		wantErr(t, "setACL without auth", err, zk.ErrNoAuth)
		// exists needs READ when the node exists; a missing node is just
		// missing.
		_, _, err = anon.Exists(p)
		wantErr(t, "exists without auth", err, zk.ErrNoAuth)
		if ok, _ := must2(t, anon.Exists, p+"/nothing"); ok {
			t.Error("exists of a missing child returned true")
		}

		wrong, _ := connect(t, srv)
		mustOK(t, wrong.AddAuth("digest", []byte("alice:wrong")))
		_, _, err = wrong.Get(p)
		wantErr(t, "get with a wrong password", err, zk.ErrNoAuth)

		data, _ := must2(t, alice.Get, p)
		if string(data) != "s" {
			t.Errorf("alice reads %q", data)
		}
		try(alice.Create(p+"/kid", nil, 0, zk.WorldACL(zk.PermAll))).must(t)

		// The auth scheme expands to the creator's ids.
		q := try(alice.Create(base+"/mine", nil, 0, zk.AuthACL(zk.PermAll))).must(t)
		got, _, err := alice.GetACL(q)
		mustOK(t, err)
		if !slices.Equal(got, acl) {
			t.Errorf("ACL from the auth scheme = %+v, want %+v", got, acl)
		}
		_, _, err = anon.Get(q)
		wantErr(t, "get creator-only node without auth", err, zk.ErrNoAuth)

		// Delete needs DELETE on the parent, not on the node.
		open := try(alice.Create(base+"/open", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		try(anon.Create(open+"/x", nil, 0, acl)).must(t)
		mustOK(t, anon.Delete(open+"/x", -1))
		_, err = admin.SetACL(base, zk.WorldACL(zk.PermAll&^zk.PermDelete), -1)
		mustOK(t, err)
		wantErr(t, "delete without DELETE on the parent", anon.Delete(open, -1), zk.ErrNoAuth)
	})

	t.Run("GetACLMasking", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		alice, _ := connect(t, srv)
		mustOK(t, alice.AddAuth("digest", []byte("alice:secret")))
		acl := append(zk.WorldACL(zk.PermRead), zk.DigestACL(zk.PermAll, "alice", "secret")...)
		p := try(alice.Create(base+"/n", nil, 0, acl)).must(t)
		got, _, err := alice.GetACL(p)
		mustOK(t, err)
		if !slices.Equal(got, acl) {
			t.Errorf("getACL with ADMIN = %+v, want %+v", got, acl)
		}
		// READ without ADMIN: digest ids come back masked.
		anon, _ := connect(t, srv)
		got, _, err = anon.GetACL(p)
		mustOK(t, err)
		want := []zk.ACL{acl[0], {Perms: zk.PermAll, Scheme: "digest", ID: "alice:x"}}
		if !slices.Equal(got, want) {
			t.Errorf("getACL without ADMIN = %+v, want %+v", got, want)
		}
	})

	t.Run("SuperDigest", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		alice, _ := connect(t, srv)
		mustOK(t, alice.AddAuth("digest", []byte("alice:secret")))
		p := try(alice.Create(base+"/locked", []byte("l"), 0, zk.DigestACL(zk.PermRead, "alice", "secret"))).must(t)
		// Even alice cannot write it; super can do anything.
		_, err := alice.Set(p, []byte("x"), -1)
		wantErr(t, "alice set on read-only node", err, zk.ErrNoAuth)

		super, _ := connect(t, srv)
		mustOK(t, super.AddAuth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)))
		data, _ := must2(t, super.Get, p)
		if string(data) != "l" {
			t.Errorf("super reads %q", data)
		}
		try(super.Set(p, []byte("x"), -1)).must(t)
		_, err = super.SetACL(p, zk.WorldACL(zk.PermAll), -1)
		mustOK(t, err)
		mustOK(t, super.Delete(p, -1))

		// whoAmI shows the super user as a digest id.
		r := harness.DialSession(t, srv.Addr(), 30000)
		if p := r.Auth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)); p.Err != wire.CodeOK {
			t.Fatalf("raw super auth: %v", p.Err)
		}
		infos, _ := r.WhoAmI()
		if !slices.Contains(infos, harness.ClientInfo{AuthScheme: "digest", User: "super"}) {
			t.Errorf("whoAmI as super = %+v", infos)
		}
	})

	t.Run("WatchNeedsRead", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		alice, _ := connect(t, srv)
		mustOK(t, alice.AddAuth("digest", []byte("alice:secret")))
		p := try(alice.Create(base+"/n", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		anon, _ := connect(t, srv)
		_, _, ch, err := anon.GetW(p)
		mustOK(t, err)
		// Once READ is revoked the change is not delivered to anon.
		_, err = alice.SetACL(p, zk.DigestACL(zk.PermAll, "alice", "secret"), -1)
		mustOK(t, err)
		try(alice.Set(p, []byte("x"), -1)).must(t)
		// A later round trip on anon: any notification would precede it.
		try(anon.Sync(base)).must(t)
		noEventYet(t, ch)
	})
}
