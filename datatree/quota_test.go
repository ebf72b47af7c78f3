package datatree

import (
	"bytes"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

func TestStatsTrackFormat(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		// What ZooKeeper 3.9's setquota writes and its server maintains.
		{"count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=20", "count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=20"},
		{"count=0,bytes=0", "count=0,bytes=0"},
		{"count=3,bytes=", "count=3,bytes=-1"},
		{"", "count=-1,bytes=-1"},
		{"junk;count=2,x,bytes=5", "count=2,bytes=5"},
	} {
		if got := ParseStatsTrack([]byte(tc.in)).String(); got != tc.out {
			t.Errorf("%q -> %q, want %q", tc.in, got, tc.out)
		}
	}
}

type quotaTree struct {
	t    *testing.T
	tree *Tree
	zxid int64
	res  Result
}

func (q *quotaTree) do(tx txn.Txn) wire.Code {
	q.zxid++
	h := txn.Header{SessionID: 1, Zxid: q.zxid, Time: q.zxid, Type: tx.Type}
	q.tree.Apply(&h, &tx, &q.res)
	return q.res.Err
}

func (q *quotaTree) create(path, data string) {
	q.t.Helper()
	var d []byte
	if data != "" {
		d = []byte(data)
	}
	if err := q.do(txn.Txn{Type: wire.OpCreate, Path: path, Data: d, ParentCVersion: -1}); err != wire.CodeOK {
		q.t.Fatalf("create %s: %v", path, err)
	}
}

func (q *quotaTree) stats(path string) string {
	q.t.Helper()
	n := q.tree.Get(QuotaStatPath(path))
	if n == nil {
		q.t.Fatalf("no stats node for %s", path)
	}
	return string(n.Data())
}

// setQuota does what zkCli's setquota does.
func (q *quotaTree) setQuota(path, limits string) {
	q.create(QuotaPath+path, "")
	q.create(QuotaLimitPath(path), limits)
	q.create(QuotaStatPath(path), "count=0,bytes=0")
}

func TestQuotaBookkeeping(t *testing.T) {
	q := &quotaTree{t: t, tree: New()}
	q.create("/a", "12345")
	q.create("/a/b", "xy")
	q.create("/ab", "not under /a")
	q.setQuota("/a", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=5")
	if got := q.stats("/a"); got != "count=2,bytes=7" {
		t.Fatalf("stats after setquota = %q, want the subtree recounted", got)
	}
	statVersion := q.tree.Get(QuotaStatPath("/a")).Persisted().Version
	q.create("/a/b/c", "abc")
	q.create("/ab/x", "1")
	if got := q.stats("/a"); got != "count=3,bytes=10" {
		t.Fatalf("after a create = %q", got)
	}
	q.do(txn.Txn{Type: wire.OpSetData, Path: "/a/b", Data: []byte("wxyz"), Version: 1})
	if got := q.stats("/a"); got != "count=3,bytes=12" {
		t.Fatalf("after setData = %q", got)
	}
	q.do(txn.Txn{Type: wire.OpDelete, Path: "/a/b/c"})
	if got := q.stats("/a"); got != "count=2,bytes=9" {
		t.Fatalf("after delete = %q", got)
	}
	if v := q.tree.Get(QuotaStatPath("/a")).Persisted().Version; v != statVersion {
		t.Fatalf("stats node version moved %d -> %d: the server's writes must not touch its stat", statVersion, v)
	}

	// A hard count limit of 5: 2 nodes now, 3 more fit, the 6th does not.
	if v := q.tree.CheckQuota("/a/n", 1, 1); v != nil {
		t.Fatalf("within the limit: %v", v)
	}
	q.create("/a/n1", "")
	q.create("/a/n2", "")
	q.create("/a/n3", "")
	v := q.tree.CheckQuota("/a/n4", 0, 1)
	if len(v) != 1 || !v[0].Hard || v[0].Bytes || v[0].Current != 6 || v[0].Limit != 5 ||
		v[0].String() != "Quota exceeded: /a [current count=6, hardCountLimit=5]" {
		t.Fatalf("over the hard limit: %v", v)
	}
	if v := q.tree.CheckQuota("/ab/y", 100, 1); v != nil {
		t.Fatalf("/ab is not under /a's quota: %v", v)
	}

	// Soft byte limit: reported, not hard.
	q.do(txn.Txn{Type: wire.OpSetData, Path: QuotaLimitPath("/a"), Data: []byte("count=-1,bytes=10"), Version: 1})
	v = q.tree.CheckQuota("/a/b", 5, 0)
	if len(v) != 1 || v[0].Hard || !v[0].Bytes || v[0].String() != "Quota exceeded: /a [current bytes=14, softByteLimit=10]" {
		t.Fatalf("soft bytes: %v", v)
	}

	// A snapshot reload recounts (and gets the same digest).
	var buf bytes.Buffer
	if err := q.tree.WriteSnapshot(&buf, nil); err != nil {
		t.Fatal(err)
	}
	re, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if re.Digest() != q.tree.Digest() || string(re.Get(QuotaStatPath("/a")).Data()) != q.stats("/a") {
		t.Fatalf("reloaded: stats %q digest %x, live %q %x", re.Get(QuotaStatPath("/a")).Data(), re.Digest(), q.stats("/a"), q.tree.Digest())
	}
	if v := re.CheckQuota("/a/b", 5, 0); len(v) != 1 {
		t.Fatal("reloaded tree lost the quota index")
	}

	// delquota: deleting the limit node drops the quota.
	q.do(txn.Txn{Type: wire.OpDelete, Path: QuotaStatPath("/a")})
	q.do(txn.Txn{Type: wire.OpDelete, Path: QuotaLimitPath("/a")})
	if v := q.tree.CheckQuota("/a/b", 1000, 1); v != nil || q.tree.quotaPrefix("/a/b") != "" {
		t.Fatalf("after delquota: %v", v)
	}
	q.create("/a/after", "x") // no stats node to update: no panic, no change
}

// TestQuotaReloadRecounts: stats written wrong by a client are recounted
// at load, as ZooKeeper's setupQuota does.
func TestQuotaReloadRecounts(t *testing.T) {
	q := &quotaTree{t: t, tree: New()}
	q.create("/a", "1")
	q.setQuota("/a", "count=10,bytes=-1")
	q.do(txn.Txn{Type: wire.OpSetData, Path: QuotaStatPath("/a"), Data: []byte("count=99,bytes=99"), Version: 1})
	var buf bytes.Buffer
	if err := q.tree.WriteSnapshot(&buf, nil); err != nil {
		t.Fatal(err)
	}
	re, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(re.Get(QuotaStatPath("/a")).Data()); got != "count=1,bytes=1" {
		t.Fatalf("reloaded stats %q", got)
	}
}

// FuzzStatsTrack: any quota node data parses without panicking, and what
// it parses to formats to text that parses back to the same values.
func FuzzStatsTrack(f *testing.F) {
	f.Add([]byte("count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=20"))
	f.Add([]byte("count=,bytes=5;;x=1,=2"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := ParseStatsTrack(b)
		again := ParseStatsTrack([]byte(s.String()))
		for _, k := range []string{StatCount, StatBytes, StatCountHardLimit, StatByteHardLimit} {
			if s.Get(k) != again.Get(k) {
				t.Fatalf("%q: %s %d -> %q -> %d", b, k, s.Get(k), s.String(), again.Get(k))
			}
		}
	})
}
