package datatree

import (
	"strings"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// TestBuilderMatchesApply: a tree rebuilt node by node from another's
// stored stats is the same tree (same digest, stats, children, indexes).
func TestBuilderMatchesApply(t *testing.T) {
	src := New()
	var res Result
	zxid := int64(0)
	do := func(session int64, tx txn.Txn) {
		zxid++
		h := txn.Header{SessionID: session, Zxid: zxid, Time: 1000 + zxid, Type: tx.Type}
		src.Apply(&h, &tx, &res)
		if res.Err != wire.CodeOK {
			t.Fatalf("%+v: %v", tx, res.Err)
		}
	}
	do(7, txn.Txn{Type: wire.OpCreateSession, Timeout: 5000})
	do(7, txn.Txn{Type: wire.OpCreate, Path: "/a", Data: []byte("x"), ACL: wire.ReadACLUnsafe, ParentCVersion: 1})
	do(7, txn.Txn{Type: wire.OpCreate, Path: "/a/b", ParentCVersion: 1})
	do(7, txn.Txn{Type: wire.OpCreate, Path: "/a/e", Ephemeral: true, ParentCVersion: 2})
	do(7, txn.Txn{Type: wire.OpCreateContainer, Path: "/c", ParentCVersion: 2})
	do(7, txn.Txn{Type: wire.OpCreateTTL, Path: "/t", TTL: 1000, ParentCVersion: 3})
	do(7, txn.Txn{Type: wire.OpDelete, Path: "/a/b"})

	b := NewBuilder(src.LastZxid())
	for id, to := range src.Sessions() {
		b.AddSession(id, to)
	}
	// Children first: the builder does not need parents first.
	paths := []string{"/a/e", "/a", "/c", "/t", "/zookeeper/config", "/zookeeper/quota", "/zookeeper", "/"}
	for _, p := range paths {
		n := src.Get(p)
		if err := b.AddNode(p, n.Data(), src.ACL(n), n.Persisted()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != src.Digest() || got.NodeCount() != src.NodeCount() || got.LastZxid() != src.LastZxid() {
		t.Fatalf("rebuilt tree differs: digest %x vs %x", got.Digest(), src.Digest())
	}
	if got.EphemeralCount() != 1 || len(got.Ephemerals(7)) != 1 || !got.Get("/c").IsContainer() {
		t.Fatal("indexes not rebuilt")
	}
	var ws, gs wire.Stat
	src.Get("/a").Stat(&ws)
	got.Get("/a").Stat(&gs)
	if ws != gs {
		t.Fatalf("stat of /a: %+v, want %+v", gs, ws)
	}
}

func TestBuilderRefusesBadInput(t *testing.T) {
	b := NewBuilder(0)
	if err := b.AddNode("/", nil, nil, PStat{}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("/", nil, nil, PStat{}); err == nil {
		t.Error("duplicate accepted")
	}
	if err := b.AddNode("a//b", nil, nil, PStat{}); err == nil {
		t.Error("bad path accepted")
	}
	if err := b.AddNode("/x/y", nil, nil, PStat{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Finish(); err == nil || !strings.Contains(err.Error(), "no parent") {
		t.Errorf("orphan: err = %v", err)
	}
	if _, err := NewBuilder(0).Finish(); err == nil {
		t.Error("tree without a root accepted")
	}
}
