package datatree

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

type txnT = txn.Txn

const (
	sessA int64 = 0x0100000000000001
	sessB int64 = 0x0100000000000002
)

func hdr(zxid int64, op wire.Op) *txn.Header {
	return &txn.Header{SessionID: sessA, Cxid: int32(zxid), Zxid: zxid, Time: 1000 + zxid, Type: op}
}

func createTxn(path string, data []byte, parentCV int32) *txn.Txn {
	return &txn.Txn{Type: wire.OpCreate, Path: path, Data: data, ACL: wire.OpenACLUnsafe, ParentCVersion: parentCV}
}

// applier drives a tree the way the request pipeline would: it computes
// each create's parent counter from the tree, so tests read like client
// operations.
type applier struct {
	t    testing.TB
	tr   *Tree
	zxid int64
	r    Result
}

func newApplier(t testing.TB) *applier { return &applier{t: t, tr: New(), zxid: 1} }

func (a *applier) apply(session int64, tx *txn.Txn) *Result {
	a.t.Helper()
	a.zxid++
	h := &txn.Header{SessionID: session, Zxid: a.zxid, Time: 1000 + a.zxid, Type: tx.Type}
	a.r.Events = a.r.Events[:0]
	a.tr.Apply(h, tx, &a.r)
	if a.tr.LastZxid() != a.zxid {
		a.t.Fatalf("LastZxid %d after applying zxid %d", a.tr.LastZxid(), a.zxid)
	}
	checkInvariants(a.t, a.tr)
	return &a.r
}

func (a *applier) nextCV(path string) int32 {
	p := a.tr.Get(ParentPath(path))
	if p == nil {
		return 1
	}
	return p.Persisted().CVersion + 1
}

func (a *applier) create(path string, data string, mode int32) *Result {
	a.t.Helper()
	tx := &txn.Txn{Type: wire.OpCreate2, Path: path, Data: []byte(data), ACL: wire.OpenACLUnsafe, ParentCVersion: a.nextCV(path)}
	switch mode {
	case wire.ModeEphemeral:
		tx.Ephemeral = true
	case wire.ModeContainer:
		tx.Type = wire.OpCreateContainer
	}
	r := a.apply(sessA, tx)
	if r.Err != wire.CodeOK {
		a.t.Fatalf("create %s: %v", path, r.Err)
	}
	return r
}

func (a *applier) del(path string) *Result {
	a.t.Helper()
	return a.apply(sessA, &txn.Txn{Type: wire.OpDelete, Path: path})
}

func TestInitialTree(t *testing.T) {
	tr := New()
	checkInvariants(t, tr)
	if got := tr.NodeCount(); got != 4 {
		t.Errorf("NodeCount = %d, want 4", got)
	}
	if got := tr.ApproximateDataSize(); got != 44 {
		t.Errorf("ApproximateDataSize = %d, want 44", got)
	}
	if s := statOf(t, tr, "/"); s != (wire.Stat{Cversion: -1, NumChildren: 1}) {
		t.Errorf("root stat %+v", s)
	}
	if s := statOf(t, tr, "/zookeeper"); s != (wire.Stat{Cversion: -2, NumChildren: 2}) {
		t.Errorf("/zookeeper stat %+v", s)
	}
	if s := statOf(t, tr, "/zookeeper/quota"); s != (wire.Stat{}) {
		t.Errorf("/zookeeper/quota stat %+v", s)
	}
	cfg := tr.Get("/zookeeper/config")
	if s := statOf(t, tr, "/zookeeper/config"); s != (wire.Stat{Aversion: -1}) {
		t.Errorf("/zookeeper/config stat %+v", s)
	}
	if !reflect.DeepEqual(tr.ACL(cfg), wire.ReadACLUnsafe) || cfg.Data() == nil || len(cfg.Data()) != 0 {
		t.Errorf("/zookeeper/config acl %v data %v", tr.ACL(cfg), cfg.Data())
	}
	if !reflect.DeepEqual(tr.ACL(tr.Get("/")), wire.OpenACLUnsafe) {
		t.Errorf("root acl %v", tr.ACL(tr.Get("/")))
	}
	if got := slices.Sorted(slices.Values(tr.Get("/zookeeper").Children(nil))); !slices.Equal(got, []string{"config", "quota"}) {
		t.Errorf("/zookeeper children %v", got)
	}
	if tr.Get("") != tr.Get("/") {
		t.Error(`Get("") is not the root`)
	}
	if tr.LastZxid() != 0 || tr.EphemeralCount() != 0 || len(tr.Sessions()) != 0 {
		t.Error("fresh tree is not empty of state")
	}
}

func TestCreateStats(t *testing.T) {
	a := newApplier(t)
	r := a.create("/a", "hello", wire.ModePersistent)
	z := a.zxid
	want := wire.Stat{Czxid: z, Mzxid: z, Ctime: 1000 + z, Mtime: 1000 + z, DataLength: 5, Pzxid: z}
	if r.Stat != want || statOf(t, a.tr, "/a") != want {
		t.Errorf("create stat %+v, want %+v", r.Stat, want)
	}
	if r.Path != "/a" {
		t.Errorf("result path %q", r.Path)
	}
	wantEv := []Event{
		{Type: wire.EventNodeCreated, Path: "/a", Zxid: z, ACL: wire.OpenACLUnsafe},
		{Type: wire.EventNodeChildrenChanged, Path: "/", Zxid: z, ACL: wire.OpenACLUnsafe},
	}
	if !reflect.DeepEqual(r.Events, wantEv) {
		t.Errorf("events %+v", r.Events)
	}
	// Root: counter 1, two children -> cversion 0.
	if s := statOf(t, a.tr, "/"); s.Cversion != 0 || s.NumChildren != 2 || s.Pzxid != z {
		t.Errorf("root after create %+v", s)
	}

	// Sequential names come from the persisted counter, which counts
	// creates only.
	var names []string
	for i := 0; i < 3; i++ {
		cv := a.tr.Get("/a").Persisted().CVersion
		p := "/a/q-" + SequentialSuffix(cv)
		a.create(p, "", wire.ModePersistent)
		names = append(names, p)
	}
	if !slices.Equal(names, []string{"/a/q-0000000000", "/a/q-0000000001", "/a/q-0000000002"}) {
		t.Errorf("sequential names %v", names)
	}
	a.del("/a/q-0000000001")
	delZxid := a.zxid
	pa := a.tr.Get("/a").Persisted()
	if pa.CVersion != 3 || pa.Pzxid != delZxid {
		t.Errorf("after delete: counter %d pzxid %d", pa.CVersion, pa.Pzxid)
	}
	// 3 creates + 1 delete.
	if s := statOf(t, a.tr, "/a"); s.Cversion != 4 || s.NumChildren != 2 {
		t.Errorf("/a stat %+v", s)
	}
	p := "/a/q-" + SequentialSuffix(a.tr.Get("/a").Persisted().CVersion)
	if p != "/a/q-0000000003" {
		t.Errorf("next sequential name %s", p)
	}
}

func TestDeleteEventsAndNoNode(t *testing.T) {
	a := newApplier(t)
	a.create("/a", "", wire.ModePersistent)
	tx := &txn.Txn{Type: wire.OpSetACL, Path: "/a", ACL: wire.ReadACLUnsafe, Version: 1}
	r := a.apply(sessA, tx)
	if r.Err != wire.CodeOK || len(r.Events) != 0 {
		t.Fatalf("setACL: %v, events %v", r.Err, r.Events)
	}
	if s := statOf(t, a.tr, "/a"); s.Aversion != 1 || r.Stat != s {
		t.Errorf("setACL stat %+v / %+v", s, r.Stat)
	}
	r = a.del("/a")
	z := a.zxid
	wantEv := []Event{
		{Type: wire.EventNodeDeleted, Path: "/a", Zxid: z, ACL: wire.ReadACLUnsafe},
		{Type: wire.EventNodeChildrenChanged, Path: "/", Zxid: z, ACL: wire.OpenACLUnsafe},
	}
	if r.Err != wire.CodeOK || !reflect.DeepEqual(r.Events, wantEv) {
		t.Errorf("delete: %v %+v", r.Err, r.Events)
	}
	before := a.tr.Digest()
	rootBefore := a.tr.Get("/").Persisted()
	r = a.del("/a")
	if r.Err != wire.CodeNoNode || len(r.Events) != 0 {
		t.Errorf("second delete: %v %v", r.Err, r.Events)
	}
	// ZooKeeper still moves the parent's pzxid forward.
	if got := a.tr.Get("/").Persisted(); got.Pzxid != a.zxid || got.CVersion != rootBefore.CVersion {
		t.Errorf("root after delete of missing child: %+v", got)
	}
	if a.tr.Digest() == before {
		t.Error("digest did not change with the root's pzxid")
	}
	if r := a.del("/nope/x"); r.Err != wire.CodeNoNode {
		t.Errorf("delete under missing parent: %v", r.Err)
	}
	if r := a.apply(sessA, &txn.Txn{Type: wire.OpSetData, Path: "/a", Version: 1}); r.Err != wire.CodeNoNode {
		t.Errorf("setData missing: %v", r.Err)
	}
	if r := a.apply(sessA, &txn.Txn{Type: wire.OpSetACL, Path: "/a", ACL: wire.OpenACLUnsafe}); r.Err != wire.CodeNoNode {
		t.Errorf("setACL missing: %v", r.Err)
	}
	if r := a.apply(sessA, createTxn("/x/y", nil, 1)); r.Err != wire.CodeNoNode {
		t.Errorf("create under missing parent: %v", r.Err)
	}
}

func TestSetData(t *testing.T) {
	a := newApplier(t)
	a.create("/a", "v0", wire.ModePersistent)
	cz := a.zxid
	r := a.apply(sessA, &txn.Txn{Type: wire.OpSetData, Path: "/a", Data: []byte("value-1"), Version: 1})
	z := a.zxid
	want := wire.Stat{Czxid: cz, Mzxid: z, Ctime: 1000 + cz, Mtime: 1000 + z, Version: 1, DataLength: 7, Pzxid: cz}
	if r.Err != wire.CodeOK || r.Stat != want || statOf(t, a.tr, "/a") != want {
		t.Errorf("setData stat %+v, want %+v", r.Stat, want)
	}
	if !reflect.DeepEqual(r.Events, []Event{{Type: wire.EventNodeDataChanged, Path: "/a", Zxid: z, ACL: wire.OpenACLUnsafe}}) {
		t.Errorf("events %+v", r.Events)
	}
	if string(a.tr.Get("/a").Data()) != "value-1" {
		t.Error("data not set")
	}
	if got := a.tr.ApproximateDataSize(); got != 44+2+7 {
		t.Errorf("ApproximateDataSize = %d", got)
	}
	// Null data stays null; the stat's data length is 0 either way.
	a.apply(sessA, &txn.Txn{Type: wire.OpSetData, Path: "/a", Data: nil, Version: 2})
	if a.tr.Get("/a").Data() != nil || statOf(t, a.tr, "/a").DataLength != 0 {
		t.Error("null data not kept")
	}
}

func TestEphemeralsAndCloseSession(t *testing.T) {
	a := newApplier(t)
	a.apply(sessA, &txn.Txn{Type: wire.OpCreateSession, Timeout: 30000})
	a.apply(sessB, &txn.Txn{Type: wire.OpCreateSession, Timeout: 10000})
	if to, ok := a.tr.SessionTimeout(sessA); !ok || to != 30000 {
		t.Errorf("SessionTimeout = %d %v", to, ok)
	}
	a.create("/app", "", wire.ModePersistent)
	for _, p := range []string{"/app/e2", "/app/e1", "/e0"} {
		tx := &txn.Txn{Type: wire.OpCreate, Path: p, ACL: wire.OpenACLUnsafe, Ephemeral: true, ParentCVersion: a.nextCV(p)}
		if r := a.apply(sessA, tx); r.Err != wire.CodeOK {
			t.Fatal(r.Err)
		}
	}
	tx := &txn.Txn{Type: wire.OpCreate, Path: "/app/b", ACL: wire.OpenACLUnsafe, Ephemeral: true, ParentCVersion: a.nextCV("/app/b")}
	a.apply(sessB, tx)
	if s := statOf(t, a.tr, "/app/e1"); s.EphemeralOwner != sessA {
		t.Errorf("ephemeralOwner %x", s.EphemeralOwner)
	}
	if !a.tr.Get("/app/e1").IsEphemeral() || a.tr.Get("/app").IsEphemeral() {
		t.Error("IsEphemeral wrong")
	}
	if got := a.tr.Ephemerals(sessA); !slices.Equal(got, []string{"/app/e1", "/app/e2", "/e0"}) {
		t.Errorf("Ephemerals = %v", got)
	}
	if a.tr.EphemeralCount() != 4 {
		t.Errorf("EphemeralCount = %d", a.tr.EphemeralCount())
	}
	all := a.tr.SessionsWithEphemerals()
	if len(all) != 2 || !slices.Equal(all[sessB], []string{"/app/b"}) {
		t.Errorf("SessionsWithEphemerals = %v", all)
	}

	r := a.apply(sessA, &txn.Txn{Type: wire.OpCloseSession})
	z := a.zxid
	var got []string
	for _, e := range r.Events {
		got = append(got, e.Path)
		if e.Zxid != z {
			t.Errorf("event zxid %d", e.Zxid)
		}
	}
	wantPaths := []string{"/app/e1", "/app", "/app/e2", "/app", "/e0", "/"}
	if !slices.Equal(got, wantPaths) || r.Events[0].Type != wire.EventNodeDeleted || r.Events[1].Type != wire.EventNodeChildrenChanged {
		t.Errorf("close events %+v", r.Events)
	}
	if a.tr.Get("/app/e1") != nil || a.tr.Get("/e0") != nil || a.tr.Get("/app/b") == nil {
		t.Error("wrong nodes deleted")
	}
	if _, ok := a.tr.SessionTimeout(sessA); ok {
		t.Error("session still in the table")
	}
	if a.tr.EphemeralCount() != 1 || a.tr.Ephemerals(sessA) != nil {
		t.Error("ephemeral index not updated")
	}
	if got := a.tr.Sessions(); !reflect.DeepEqual(got, map[int64]int32{sessB: 10000}) {
		t.Errorf("Sessions = %v", got)
	}
	// Deleting an ephemeral by hand updates the index too.
	a.del("/app/b")
	if a.tr.EphemeralCount() != 0 || a.tr.Ephemerals(sessB) != nil {
		t.Error("index not updated by delete")
	}
	// ZooKeeper lists the session (with no paths) until it closes.
	if got := a.tr.SessionsWithEphemerals(); len(got) != 1 || len(got[sessB]) != 0 {
		t.Errorf("SessionsWithEphemerals after delete = %v", got)
	}
	a.apply(sessB, &txn.Txn{Type: wire.OpCloseSession})
	if len(a.tr.SessionsWithEphemerals()) != 0 {
		t.Error("closed session still listed")
	}
}

func TestContainersAndTTL(t *testing.T) {
	a := newApplier(t)
	a.create("/c", "", wire.ModeContainer)
	cTime := 1000 + a.zxid
	n := a.tr.Get("/c")
	if !n.IsContainer() || n.IsEphemeral() || n.Persisted().EphemeralOwner != math.MinInt64 {
		t.Errorf("container owner %x", n.Persisted().EphemeralOwner)
	}
	if statOf(t, a.tr, "/c").EphemeralOwner != 0 {
		t.Error("container shows an ephemeralOwner")
	}
	// Never-used container: only with maxNeverUsed, after it has elapsed.
	if got := a.tr.ReapCandidates(cTime+1_000_000, 0, nil); len(got) != 0 {
		t.Errorf("candidates %v", got)
	}
	if got := a.tr.ReapCandidates(cTime+100, 100, nil); len(got) != 0 {
		t.Errorf("candidates at the limit %v", got)
	}
	if got := a.tr.ReapCandidates(cTime+101, 100, nil); !slices.Equal(got, []string{"/c"}) {
		t.Errorf("never-used candidates %v", got)
	}
	ttlTx := &txn.Txn{Type: wire.OpCreateTTL, Path: "/t", ACL: wire.OpenACLUnsafe, ParentCVersion: a.nextCV("/t"), TTL: 5000}
	if r := a.apply(sessA, ttlTx); r.Err != wire.CodeOK || r.Stat.EphemeralOwner != 0 {
		t.Fatalf("createTTL: %v %+v", r.Err, r.Stat)
	}
	tTime := 1000 + a.zxid
	tn := a.tr.Get("/t")
	if ttl, ok := tn.TTL(); !ok || ttl != 5000 || tn.Persisted().EphemeralOwner != -0x00FFFFFFFFFFEC78 {
		// 0xFF00000000001388
		t.Errorf("ttl node: %d %v owner %x", ttl, ok, tn.Persisted().EphemeralOwner)
	}
	if tn.IsEphemeral() || tn.IsContainer() {
		t.Error("ttl node misclassified")
	}

	// TTL: once now - mtime > ttl.
	if got := a.tr.ReapCandidates(tTime+5000, 0, nil); len(got) != 0 {
		t.Errorf("ttl candidates at the limit %v", got)
	}
	if got := a.tr.ReapCandidates(tTime+5001, 0, []string{"keep"}); !slices.Equal(got, []string{"keep", "/t"}) {
		t.Errorf("ttl candidates %v", got)
	}
	// A TTL node with a child is not a candidate.
	a.create("/t/kid", "", wire.ModePersistent)
	if got := a.tr.ReapCandidates(tTime+10_000, 0, nil); len(got) != 0 {
		t.Errorf("ttl with child %v", got)
	}
	// A container that had a child becomes a candidate once empty.
	a.create("/c/kid", "", wire.ModePersistent)
	if got := a.tr.ReapCandidates(cTime, 0, nil); len(got) != 0 {
		t.Errorf("non-empty container %v", got)
	}
	a.del("/c/kid")
	if got := a.tr.ReapCandidates(cTime, 0, nil); !slices.Equal(got, []string{"/c"}) {
		t.Errorf("used container %v", got)
	}
	if r := a.apply(sessA, &txn.Txn{Type: wire.OpDeleteContainer, Path: "/c"}); r.Err != wire.CodeOK {
		t.Fatal(r.Err)
	}
	if len(a.tr.containers) != 0 {
		t.Error("container index not updated")
	}
}

func TestMulti(t *testing.T) {
	a := newApplier(t)
	a.create("/m", "", wire.ModePersistent)
	tx := &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
		{Type: wire.OpCreate, Path: "/m/a", Data: []byte("x"), ACL: wire.OpenACLUnsafe, ParentCVersion: 1},
		{Type: wire.OpCreate2, Path: "/m/b", ACL: wire.OpenACLUnsafe, ParentCVersion: 2},
		{Type: wire.OpSetData, Path: "/m/a", Data: []byte("yy"), Version: 1},
		{Type: wire.OpCheck, Path: "/m/b", Version: 0},
		{Type: wire.OpDelete, Path: "/m/b"},
	}}
	r := a.apply(sessA, tx)
	z := a.zxid
	if r.Err != wire.CodeOK || len(r.Multi) != 5 {
		t.Fatalf("multi: %v %+v", r.Err, r.Multi)
	}
	for i, op := range r.Multi {
		if op.Err != wire.CodeOK || op.Type != tx.Ops[i].Type || op.Path != tx.Ops[i].Path {
			t.Errorf("op %d: %+v", i, op)
		}
	}
	if r.Multi[2].Stat.Version != 1 || r.Multi[2].Stat.Mzxid != z || r.Multi[1].Stat.Czxid != z {
		t.Errorf("multi stats %+v", r.Multi)
	}
	var evs []int32
	for _, e := range r.Events {
		evs = append(evs, e.Type)
		if e.Zxid != z {
			t.Error("multi event with another zxid")
		}
	}
	wantEv := []int32{wire.EventNodeCreated, wire.EventNodeChildrenChanged, wire.EventNodeCreated,
		wire.EventNodeChildrenChanged, wire.EventNodeDataChanged, wire.EventNodeDeleted, wire.EventNodeChildrenChanged}
	if !slices.Equal(evs, wantEv) {
		t.Errorf("multi events %v", evs)
	}
	if s := statOf(t, a.tr, "/m"); s.Cversion != 3 || s.NumChildren != 1 || s.Pzxid != z {
		t.Errorf("/m after multi %+v", s)
	}

	// A failed multi as the pipeline logs it: every op an error.
	before := a.tr.Digest()
	failed := &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
		{Type: wire.OpError, Err: wire.CodeOK},
		{Type: wire.OpError, Err: wire.CodeBadVersion},
		{Type: wire.OpError, Err: wire.CodeRuntimeInconsistency},
	}}
	r = a.apply(sessA, failed)
	want := []OpResult{{Type: wire.OpError}, {Type: wire.OpError, Err: wire.CodeBadVersion}, {Type: wire.OpError, Err: wire.CodeRuntimeInconsistency}}
	if r.Err != wire.CodeOK || !reflect.DeepEqual(r.Multi, want) || len(r.Events) != 0 {
		t.Errorf("failed multi: %v %+v %v", r.Err, r.Multi, r.Events)
	}
	// Mixed ops with an error: nothing applies, ZooKeeper's codes.
	mixed := &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
		{Type: wire.OpCreate, Path: "/m/z", ACL: wire.OpenACLUnsafe, ParentCVersion: 4},
		{Type: wire.OpError, Err: wire.CodeNodeExists},
		{Type: wire.OpSetData, Path: "/m/a", Data: []byte("zz"), Version: 2},
	}}
	r = a.apply(sessA, mixed)
	want = []OpResult{{Type: wire.OpError}, {Type: wire.OpError, Err: wire.CodeNodeExists}, {Type: wire.OpError, Err: wire.CodeRuntimeInconsistency}}
	if !reflect.DeepEqual(r.Multi, want) || len(r.Events) != 0 {
		t.Errorf("mixed failed multi: %+v", r.Multi)
	}
	if a.tr.Digest() != before || a.tr.Get("/m/z") != nil {
		t.Error("failed multi changed the tree")
	}
	if a.tr.LastZxid() != a.zxid {
		t.Error("failed multi did not advance LastZxid")
	}
	// Ops that cannot be in a multi are refused one by one.
	r = a.apply(sessA, &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{{Type: wire.OpCloseSession}}})
	if r.Multi[0].Err != wire.CodeUnimplemented {
		t.Errorf("closeSession in multi: %+v", r.Multi)
	}
}

func TestErrorTxn(t *testing.T) {
	a := newApplier(t)
	before := a.tr.Digest()
	r := a.apply(sessA, &txn.Txn{Type: wire.OpError, Err: wire.CodeNoAuth})
	if r.Err != wire.CodeNoAuth || len(r.Events) != 0 || a.tr.Digest() != before {
		t.Errorf("error txn: %+v", r)
	}
	r = a.apply(sessA, &txn.Txn{Type: wire.OpGetData, Path: "/"})
	if r.Err != wire.CodeUnimplemented {
		t.Errorf("read op as txn: %v", r.Err)
	}
	r = a.apply(sessA, &txn.Txn{Type: wire.OpCheck, Path: "/", Version: 3})
	if r.Err != wire.CodeOK || a.tr.Digest() != before {
		t.Errorf("check txn: %+v", r)
	}
}

// Replaying a create over a snapshot that already has the node.
func TestReplayCreateExisting(t *testing.T) {
	a := newApplier(t)
	a.create("/p", "", wire.ModePersistent)
	a.create("/p/c", "data", wire.ModePersistent) // parent counter 1
	old := a.tr.Get("/p").Persisted()
	// Same create again (older zxid than the tree's state), other ACL.
	tx := &txn.Txn{Type: wire.OpCreate2, Path: "/p/c", Data: []byte("other"), ACL: wire.ReadACLUnsafe, ParentCVersion: 1}
	var r Result
	a.tr.Apply(&txn.Header{Zxid: 3, Type: wire.OpCreate2}, tx, &r)
	checkInvariants(t, a.tr)
	if r.Err != wire.CodeNodeExists || len(r.Events) != 0 {
		t.Errorf("replayed create: %v %v", r.Err, r.Events)
	}
	n := a.tr.Get("/p/c")
	if string(n.Data()) != "data" || !reflect.DeepEqual(a.tr.ACL(n), wire.ReadACLUnsafe) {
		t.Errorf("existing node: data %q acl %v (ZooKeeper keeps data, takes the ACL)", n.Data(), a.tr.ACL(n))
	}
	if a.tr.Get("/p").Persisted() != old {
		t.Error("older create moved the parent")
	}
	// A create with a higher counter for an existing node raises the parent.
	tx.ParentCVersion = 5
	a.tr.Apply(&txn.Header{Zxid: 40, Type: wire.OpCreate2}, tx, &r)
	checkInvariants(t, a.tr)
	if p := a.tr.Get("/p").Persisted(); p.CVersion != 5 || p.Pzxid != 40 {
		t.Errorf("parent not raised: %+v", p)
	}
	// An older create of a missing node adds it without moving the parent.
	tx = &txn.Txn{Type: wire.OpCreate, Path: "/p/d", ACL: wire.OpenACLUnsafe, ParentCVersion: 2}
	a.tr.Apply(&txn.Header{Zxid: 4, Type: wire.OpCreate}, tx, &r)
	checkInvariants(t, a.tr)
	if p := a.tr.Get("/p").Persisted(); p.CVersion != 5 || p.Pzxid != 40 || a.tr.Get("/p/d") == nil {
		t.Errorf("older create: %+v", p)
	}
	// Create of "/" is NodeExists, a malformed path BadArguments.
	a.tr.Apply(&txn.Header{Zxid: 41}, &txn.Txn{Type: wire.OpCreate, Path: "/"}, &r)
	if r.Err != wire.CodeNodeExists {
		t.Errorf("create /: %v", r.Err)
	}
	for _, p := range []string{"", "x", "/p/", "/p//x"} {
		a.tr.Apply(&txn.Header{Zxid: 42}, &txn.Txn{Type: wire.OpCreate, Path: p}, &r)
		if r.Err != wire.CodeBadArguments {
			t.Errorf("create %q: %v", p, r.Err)
		}
	}
	checkInvariants(t, a.tr)
}

// Replaying a delete of a node that the snapshot caught with children of a
// later incarnation removes them with it.
func TestReplayDeleteWithChildren(t *testing.T) {
	a := newApplier(t)
	a.create("/p", "", wire.ModePersistent)
	a.create("/p/c", "", wire.ModePersistent)
	a.create("/p/c/d", "", wire.ModePersistent)
	r := a.del("/p")
	if r.Err != wire.CodeOK || a.tr.Get("/p/c") != nil || a.tr.Get("/p/c/d") != nil {
		t.Errorf("delete with children: %v", r.Err)
	}
	if a.tr.NodeCount() != 4 {
		t.Errorf("NodeCount = %d", a.tr.NodeCount())
	}
}

func TestCountDescendants(t *testing.T) {
	a := newApplier(t)
	a.create("/a", "", wire.ModePersistent)
	a.create("/a/b", "", wire.ModePersistent)
	a.create("/a/b/c", "", wire.ModePersistent)
	a.create("/a/d", "", wire.ModePersistent)
	a.create("/ab", "", wire.ModePersistent)
	cases := map[string]int{"/": 8, "/a": 3, "/a/b": 1, "/a/b/c": 0, "/ab": 0, "/missing": 0, "/zookeeper": 2, "": 9}
	for p, want := range cases {
		if got := a.tr.CountDescendants(p); got != want {
			t.Errorf("CountDescendants(%q) = %d, want %d", p, got, want)
		}
	}
}

func TestDigestIsOrderIndependent(t *testing.T) {
	build := func(order []string) *Tree {
		tr := New()
		var r Result
		for i, p := range order {
			// Fix every stat field so only the order differs.
			tx := createTxn(p, []byte(p), 1)
			tr.Apply(&txn.Header{Zxid: 100, Time: 5}, tx, &r)
			_ = i
		}
		return tr
	}
	x := build([]string{"/a", "/b", "/c"})
	y := build([]string{"/c", "/a", "/b"})
	if x.Digest() != y.Digest() {
		t.Error("digest depends on creation order")
	}
	if x.Digest() == New().Digest() {
		t.Error("digest ignores nodes")
	}
	var r Result
	x.Apply(&txn.Header{Zxid: 101}, &txn.Txn{Type: wire.OpSetData, Path: "/a", Data: []byte("/a"), Version: 0}, &r)
	if x.Digest() == y.Digest() {
		t.Error("digest ignores mzxid")
	}
	d := y.Digest()
	y.Apply(&txn.Header{Zxid: 101, SessionID: 9}, &txn.Txn{Type: wire.OpCreateSession, Timeout: 1}, &r)
	if y.Digest() == d {
		t.Error("digest ignores sessions")
	}
	y.Apply(&txn.Header{Zxid: 102, SessionID: 9}, &txn.Txn{Type: wire.OpCloseSession}, &r)
	if y.Digest() != d {
		t.Error("closing the session did not restore the digest")
	}
}

func TestXXH64(t *testing.T) {
	// Reference values of XXH64 with seed 0.
	cases := map[string]uint64{
		"":    0xEF46DB3751D8E999,
		"a":   0xD24EC4F1A98C6E5B,
		"abc": 0x44BC2CF5AD770999,
		"Nobody inspects the spammish repetition": 0xFBCEA83C8A378BF1,
	}
	for in, want := range cases {
		if got := xxh64([]byte(in), 0); got != want {
			t.Errorf("xxh64(%q) = %#x, want %#x", in, got, want)
		}
	}
}

// The hot paths allocate nothing beyond the node a create adds and the
// tree's own copy of its data (see Apply).
func TestApplyAllocations(t *testing.T) {
	tr := New()
	var r Result
	r.Events = make([]Event, 0, 4)
	tr.Apply(&txn.Header{Zxid: 2}, createTxn("/a", []byte("x"), 1), &r)
	data := []byte("some data")
	set := &txn.Txn{Type: wire.OpSetData, Path: "/a", Data: data, Version: 1}
	z := int64(3)
	if n := testing.AllocsPerRun(100, func() {
		r.Events = r.Events[:0]
		z++
		tr.Apply(&txn.Header{Zxid: z}, set, &r)
	}); n != 0 {
		t.Errorf("setData allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = tr.Get("/a") }); n != 0 {
		t.Errorf("Get allocates %v times", n)
	}
	var s wire.Stat
	ids := []wire.Id{{Scheme: "ip", ID: "10.0.0.1"}, {Scheme: "digest", ID: "u:p"}}
	acls := []wire.ACL{acl(1, "ip", "10.0.0.0/8")}
	if n := testing.AllocsPerRun(100, func() {
		tr.Get("/a").Stat(&s)
		CheckPerm(acls, wire.PermRead, ids)
	}); n != 0 {
		t.Errorf("Stat/CheckPerm allocate %v times", n)
	}
	// Re-create under a parent that already has a child list: the node and
	// its data and nothing else.
	del := &txn.Txn{Type: wire.OpDelete, Path: "/a"}
	cr := createTxn("/a", data, 0)
	if n := testing.AllocsPerRun(100, func() {
		r.Events = r.Events[:0]
		z++
		tr.Apply(&txn.Header{Zxid: z}, del, &r)
		z++
		cr.ParentCVersion = tr.Get("/").Persisted().CVersion + 1
		tr.Apply(&txn.Header{Zxid: z}, cr, &r)
	}); n > 2 {
		t.Errorf("delete+create allocates %v times, want 2 (the node and its data)", n)
	}
}

// TestSetLocalConfig: an ensemble member's /zookeeper/config carries the
// stat ZooKeeper leaves (version -1, mzxid the configuration's version,
// its own mtime, ctime 0) and stays out of the digest, so members that
// wrote it at different times still compare equal.
func TestSetLocalConfig(t *testing.T) {
	a, b := New(), New()
	before := a.Digest()
	cfg := []byte("server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nversion=100000003")
	a.SetLocalConfig(cfg, 0x100000003, 1000)
	b.SetLocalConfig(cfg, 0x100000003, 2000)
	n := a.Get(ConfigPath)
	var st wire.Stat
	n.Stat(&st)
	if string(n.Data()) != string(cfg) || st.Version != -1 || st.Mzxid != 0x100000003 || st.Mtime != 1000 || st.Ctime != 0 ||
		st.Aversion != -1 || st.DataLength != int32(len(cfg)) {
		t.Fatalf("config node %q %+v", n.Data(), st)
	}
	if a.Digest() != before || b.Digest() != before {
		t.Fatalf("digests %x %x, want %x as before", a.Digest(), b.Digest(), before)
	}
	// The data size counts the config as a tree loaded from this one's
	// snapshot does (a learner after a SNAP), also after it changes.
	var buf bytes.Buffer
	if err := a.WriteSnapshot(&buf, nil); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	loaded.SetLocalConfig(cfg, 0x100000003, 3000)
	if loaded.ApproximateDataSize() != a.ApproximateDataSize() {
		t.Fatalf("data size %d after a snapshot round trip, %d before", loaded.ApproximateDataSize(), a.ApproximateDataSize())
	}
	longer := append(slices.Clone(cfg), "\nserver.2=127.0.0.1:2889:3889:participant"...)
	a.SetLocalConfig(longer, 0x100000004, 1000)
	if got, want := a.ApproximateDataSize()-b.ApproximateDataSize(), int64(len(longer)-len(cfg)); got != want {
		t.Fatalf("a longer config grew the data size by %d, want %d", got, want)
	}
}

// TestApplyKeepsNoSliceOfTxnData: the members apply committed entries
// decoded in place (txn.DecodeShared), so every Data the tree keeps must
// be its own copy. Overwriting each txn's buffers after Apply changes
// nothing the tree returns: small and large (own allocation) records,
// created, set and created in a multi.
func TestApplyKeepsNoSliceOfTxnData(t *testing.T) {
	a := newApplier(t)
	small := []byte("small value")
	large := make([]byte, largeRecord+100)
	for i := range large {
		large[i] = byte(i)
	}
	want := map[string][]byte{}
	var bufs [][]byte
	apply := func(tx *txn.Txn, path string, data []byte) {
		t.Helper()
		buf := slices.Clone(data)
		want[path] = slices.Clone(data)
		switch tx.Type {
		case wire.OpMulti:
			tx.Ops[0].Data = buf
		default:
			tx.Data = buf
		}
		if r := a.apply(sessA, tx); r.Err != wire.CodeOK {
			t.Fatalf("%s: %v", path, r.Err)
		}
		bufs = append(bufs, buf)
	}
	apply(createTxn("/s", nil, a.nextCV("/s")), "/s", small)
	apply(createTxn("/l", nil, a.nextCV("/l")), "/l", large)
	apply(&txn.Txn{Type: wire.OpSetData, Path: "/s", Version: 1}, "/s", large)
	apply(&txn.Txn{Type: wire.OpSetData, Path: "/l", Version: 1}, "/l", small)
	apply(&txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{*createTxn("/m", nil, a.nextCV("/m"))}}, "/m", large)
	for _, b := range bufs {
		for i := range b {
			b[i] ^= 0xff
		}
	}
	for path, w := range want {
		if got := a.tr.Get(path).Data(); !slices.Equal(got, w) {
			t.Errorf("%s: the tree's data changed with the txn's buffer (%d bytes, want %d)", path, len(got), len(w))
		}
	}
}
