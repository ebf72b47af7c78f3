package datatree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// workload generates valid transactions against a live tree, the way the
// request pipeline would: parent counters from the tree, versions bumped,
// ephemerals owned by open sessions, no children under ephemerals. Its
// namespace is small so nodes are deleted and re-created often, which is
// what makes fuzzy snapshots interesting.
type workload struct {
	rng         *rand.Rand
	zxid        int64
	names       []string
	sessions    []int64
	nextSession int64
	seqPath     string
	// logs adds a third of the transactions on logs under packTestRoot
	// (pack_test.go).
	logs bool
}

func newWorkload(seed uint64) *workload {
	w := &workload{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), zxid: 1, nextSession: 0x0100000000000001, seqPath: "/seq"}
	for i := 0; i < 16; i++ {
		a := fmt.Sprintf("/w%d", i)
		w.names = append(w.names, a)
		for j := 0; j < 16; j++ {
			b := fmt.Sprintf("%s/%d", a, j)
			w.names = append(w.names, b)
			for k := 0; k < 16; k++ {
				w.names = append(w.names, fmt.Sprintf("%s/%d", b, k))
			}
		}
	}
	return w
}

func (w *workload) header(op wire.Op, session int64) *txn.Header {
	w.zxid++
	return &txn.Header{SessionID: session, Cxid: int32(w.zxid), Zxid: w.zxid, Time: 1_700_000_000_000 + w.zxid*3, Type: op}
}

var workloadACLs = [][]wire.ACL{
	wire.OpenACLUnsafe,
	wire.ReadACLUnsafe,
	{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="}}},
}

func (w *workload) session() int64 {
	if len(w.sessions) == 0 {
		return 0
	}
	return w.sessions[w.rng.IntN(len(w.sessions))]
}

// createOp builds a create of path for the tree's current state (the
// parent must exist and not be ephemeral).
func (w *workload) createOp(tr *Tree, path string) txn.Txn {
	parent := tr.Get(ParentPath(path))
	tx := txn.Txn{Type: wire.OpCreate2, Path: path, Data: []byte(fmt.Sprint(w.zxid)),
		ACL: workloadACLs[w.rng.IntN(len(workloadACLs))], ParentCVersion: parent.Persisted().CVersion + 1}
	switch r := w.rng.IntN(20); {
	case r < 3 && len(w.sessions) > 0:
		tx.Ephemeral = true
	case r < 5:
		tx.Type = wire.OpCreateContainer
	case r < 6:
		tx.Type = wire.OpCreateTTL
		tx.TTL = 1 + w.rng.Int64N(100000)
	case r < 7:
		tx.Data = nil
	}
	return tx
}

func (w *workload) next(tr *Tree) (*txn.Header, *txn.Txn) {
	if w.logs && len(w.sessions) > 0 && w.rng.IntN(3) == 0 {
		return w.logOp(tr)
	}
	switch r := w.rng.IntN(100); {
	case r < 2 || len(w.sessions) == 0:
		id := w.nextSession
		w.nextSession++
		w.sessions = append(w.sessions, id)
		return w.header(wire.OpCreateSession, id), &txn.Txn{Type: wire.OpCreateSession, Timeout: int32(1000 + w.rng.IntN(30000))}
	case r < 4 && len(w.sessions) > 1:
		i := w.rng.IntN(len(w.sessions))
		id := w.sessions[i]
		w.sessions = append(w.sessions[:i], w.sessions[i+1:]...)
		// Name the ephemerals, as the leader does.
		return w.header(wire.OpCloseSession, id), &txn.Txn{Type: wire.OpCloseSession, Paths: tr.Ephemerals(id)}
	case r < 9:
		return w.sequential(tr)
	case r < 15:
		return w.churn(tr)
	case r < 11:
		h := w.header(wire.OpMulti, w.session())
		return h, &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
			{Type: wire.OpError, Err: wire.CodeOK},
			{Type: wire.OpError, Err: wire.CodeBadVersion},
			{Type: wire.OpError, Err: wire.CodeRuntimeInconsistency},
		}}
	}

	path := w.names[w.rng.IntN(len(w.names))]
	n := tr.Get(path)
	if n == nil {
		// Create it, or its first missing ancestor.
		for tr.Get(ParentPath(path)) == nil {
			path = ParentPath(path)
		}
		if tr.Get(ParentPath(path)).IsEphemeral() {
			return w.header(wire.OpError, 0), &txn.Txn{Type: wire.OpError, Err: wire.CodeNoChildrenForEphemerals}
		}
		tx := w.createOp(tr, path)
		session := int64(0)
		if tx.Ephemeral {
			session = w.session()
		}
		if w.rng.IntN(4) == 0 {
			// create + setData + check in one multi, one zxid.
			set := txn.Txn{Type: wire.OpSetData, Path: path, Data: []byte("m"), Version: 1}
			multi := &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{tx, set, {Type: wire.OpCheck, Path: path, Version: 1}}}
			return w.header(wire.OpMulti, session), multi
		}
		return w.header(tx.Type, session), &tx
	}
	p := n.Persisted()
	switch r := w.rng.IntN(10); {
	case r < 2 && n.NumChildren() == 0:
		if w.rng.IntN(3) == 0 {
			parent := ParentPath(path)
			multi := &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
				{Type: wire.OpDelete, Path: path},
				{Type: wire.OpSetData, Path: parent, Data: []byte("parent"), Version: tr.Get(parent).Persisted().Version + 1},
			}}
			return w.header(wire.OpMulti, w.session()), multi
		}
		return w.header(wire.OpDelete, w.session()), &txn.Txn{Type: wire.OpDelete, Path: path}
	case r < 8:
		data := make([]byte, w.rng.IntN(40))
		for i := range data {
			data[i] = byte(w.rng.Uint32())
		}
		return w.header(wire.OpSetData, w.session()), &txn.Txn{Type: wire.OpSetData, Path: path, Data: data, Version: p.Version + 1}
	default:
		return w.header(wire.OpSetACL, w.session()), &txn.Txn{Type: wire.OpSetACL, Path: path,
			ACL: workloadACLs[w.rng.IntN(len(workloadACLs))], Version: p.Aversion + 1}
	}
}

func (w *workload) sequential(tr *Tree) (*txn.Header, *txn.Txn) {
	parent := tr.Get(w.seqPath)
	if parent == nil {
		tx := txn.Txn{Type: wire.OpCreate, Path: w.seqPath, ACL: wire.OpenACLUnsafe, ParentCVersion: tr.Get("/").Persisted().CVersion + 1}
		return w.header(wire.OpCreate, 0), &tx
	}
	if parent.NumChildren() > 20 {
		kids := parent.Children(nil)
		return w.header(wire.OpDelete, 0), &txn.Txn{Type: wire.OpDelete, Path: w.seqPath + "/" + kids[w.rng.IntN(len(kids))]}
	}
	cv := parent.Persisted().CVersion
	tx := txn.Txn{Type: wire.OpCreate, Path: w.seqPath + "/lock-" + SequentialSuffix(cv), ACL: wire.OpenACLUnsafe, ParentCVersion: cv + 1}
	session := int64(0)
	if w.rng.IntN(2) == 0 {
		tx.Ephemeral = true
		session = w.session()
	}
	return w.header(wire.OpCreate, session), &tx
}

// churn deletes whole subtrees (children first, in one multi) and
// re-creates them with fresh child names, so a snapshot taken meanwhile
// holds children of one incarnation of a node and the node of another, or
// children without their parent.
func (w *workload) churn(tr *Tree) (*txn.Header, *txn.Txn) {
	const root = "/churn"
	if tr.Get(root) == nil {
		tx := txn.Txn{Type: wire.OpCreate, Path: root, ACL: wire.OpenACLUnsafe, ParentCVersion: tr.Get("/").Persisted().CVersion + 1}
		return w.header(wire.OpCreate, 0), &tx
	}
	p := fmt.Sprintf("%s/%d", root, w.rng.IntN(4))
	n := tr.Get(p)
	create := func(path string, cv int32) txn.Txn {
		return txn.Txn{Type: wire.OpCreate, Path: path, Data: []byte(path), ACL: wire.OpenACLUnsafe, ParentCVersion: cv}
	}
	if n == nil {
		c := fmt.Sprintf("%s/c%d", p, w.zxid)
		multi := &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
			create(p, tr.Get(root).Persisted().CVersion+1),
			create(c, 1),
			create(c+"/d", 1),
		}}
		return w.header(wire.OpMulti, 0), multi
	}
	if w.rng.IntN(2) == 0 {
		c := fmt.Sprintf("%s/c%d", p, w.zxid)
		tx := create(c, n.Persisted().CVersion+1)
		return w.header(wire.OpCreate, 0), &tx
	}
	var ops []txn.Txn
	for _, name := range n.Children(nil) {
		c := p + "/" + name
		if tr.Get(c+"/d") != nil {
			ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: c + "/d"})
		}
		ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: c})
	}
	ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: p})
	return w.header(wire.OpMulti, 0), &txn.Txn{Type: wire.OpMulti, Ops: ops}
}

type logged struct {
	h  txn.Header
	tx txn.Txn
}

type replayStats struct{ nodeExists, noNode, dropped int }

// runFuzzy takes a fuzzy snapshot of a tree while another goroutine keeps
// applying transactions under a shared RWMutex (the yield callback lets it
// run a batch), then replays the log after the snapshot's zxid over the
// loaded snapshot and requires the live tree's digest.
func runFuzzy(t *testing.T, seed uint64) replayStats { return runFuzzyPacked(t, seed, false) }

// runFuzzyPacked is runFuzzy, with logs under packTestRoot in the
// workload and their entries packed if packed is set. Then every
// transaction is also applied to a tree that packs nothing, which must
// answer the same and end with the same digest.
func runFuzzyPacked(t *testing.T, seed uint64, packed bool) replayStats {
	live := New()
	w := newWorkload(seed)
	var plain *Tree
	var pr Result
	if packed {
		live.SetPackRoot(packTestRoot, testCodec{})
		w.logs = true
		plain = New()
	}
	var mu sync.RWMutex
	var log []logged
	var r Result
	apply := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < n; i++ {
			h, tx := w.next(live)
			r.Events = r.Events[:0]
			live.Apply(h, tx, &r)
			if plain != nil {
				pr.Events = pr.Events[:0]
				plain.Apply(h, tx, &pr)
				if d := diffResults(&r, &pr); d != "" {
					t.Fatalf("seed %d: %+v: packed and plain trees answer differently: %s", seed, tx, d)
				}
			}
			if r.Err != wire.CodeOK && tx.Type != wire.OpError {
				t.Errorf("seed %d: live apply of %+v failed: %v", seed, tx, r.Err)
			}
			for _, m := range r.Multi {
				if m.Err != wire.CodeOK && tx.Ops[0].Type != wire.OpError {
					t.Errorf("seed %d: live multi op failed: %+v", seed, r.Multi)
				}
			}
			log = append(log, logged{*h, *tx})
		}
	}
	apply(25000)
	checkInvariants(t, live)

	batches := make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := range batches {
			apply(n)
			done <- struct{}{}
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 1))
	var buf bytes.Buffer
	mu.RLock()
	yields := 0
	err := live.WriteSnapshot(&buf, func(write func()) {
		yields++
		mu.RUnlock()
		write()
		if packed {
			// Smaller chunks (TestFuzzySnapshotReplayPacked), fewer
			// transactions each: entries outlive the snapshot.
			batches <- 5 + rng.IntN(20)
		} else {
			batches <- 100 + rng.IntN(400)
		}
		<-done
		mu.RLock()
	})
	mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	batches <- 300 // and more after the snapshot
	<-done
	close(batches)
	<-done
	if yields < 3 {
		t.Fatalf("only %d yields: the snapshot was not fuzzy enough to test anything", yields)
	}
	checkInvariants(t, live)

	loaded, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if packed {
		loaded.SetPackRoot(packTestRoot, testCodec{})
	}
	checkInvariants(t, loaded)
	var st replayStats
	count := func(c wire.Code) {
		switch c {
		case wire.CodeNodeExists:
			st.nodeExists++
		case wire.CodeNoNode:
			st.noNode++
		}
	}
	from := loaded.LastZxid()
	replayed := 0
	for i := range log {
		if log[i].h.Zxid <= from {
			continue
		}
		replayed++
		r.Events = r.Events[:0]
		loaded.Apply(&log[i].h, &log[i].tx, &r)
		count(r.Err)
		for _, m := range r.Multi {
			count(m.Err)
		}
	}
	if replayed == 0 {
		t.Fatal("nothing to replay")
	}
	checkInvariants(t, loaded)
	if loaded.LastZxid() != live.LastZxid() {
		t.Errorf("seed %d: LastZxid %d, live %d", seed, loaded.LastZxid(), live.LastZxid())
	}
	if loaded.Digest() != live.Digest() {
		t.Fatalf("seed %d: replayed digest %x, live %x: %s", seed, loaded.Digest(), live.Digest(), diffTrees(live, loaded))
	}
	if d := diffTrees(live, loaded); d != "[]" {
		t.Fatalf("seed %d: equal digests but trees differ: %s", seed, d)
	}
	if plain != nil {
		if live.Digest() != plain.Digest() || live.NodeCount() != plain.NodeCount() || live.ApproximateDataSize() != plain.ApproximateDataSize() {
			t.Fatalf("seed %d: packed tree digest %x, %d nodes, %d bytes; plain %x, %d, %d: %s", seed,
				live.Digest(), live.NodeCount(), live.ApproximateDataSize(), plain.Digest(), plain.NodeCount(), plain.ApproximateDataSize(), diffTrees(live, plain))
		}
		if d := diffTrees(live, plain); d != "[]" {
			t.Fatalf("seed %d: packed and plain trees differ: %s", seed, d)
		}
		if live.PackedCount() == 0 || loaded.PackedCount() == 0 {
			t.Fatalf("seed %d: nothing packed (live %d, loaded %d)", seed, live.PackedCount(), loaded.PackedCount())
		}
		t.Logf("seed %d: %d entries packed live, %d after the load", seed, live.PackedCount(), loaded.PackedCount())
	}
	t.Logf("seed %d: %d nodes, %d yields, %d txns replayed, %d NodeExists, %d NoNode",
		seed, live.NodeCount(), yields, replayed, st.nodeExists, st.noNode)
	return st
}

func TestFuzzySnapshotReplay(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	var total replayStats
	for seed := 1; seed <= seeds; seed++ {
		st := runFuzzy(t, uint64(seed))
		total.nodeExists += st.nodeExists
		total.noNode += st.noNode
	}
	// The replay must actually have met state the snapshot caught after
	// its zxid, or the test proves nothing.
	if total.nodeExists == 0 || total.noNode == 0 {
		t.Errorf("replays never hit the fuzzy cases: %+v", total)
	}
}

// fuzzyCase checks one hand-built fuzzy snapshot: snap is the state the
// snapshot caught (built by the test, LastZxid forced to from), log the
// transactions after from, and live the tree those transactions give when
// applied to the true state at from.
// fuzzySnap is what a fuzzy snapshot of tr caught: its nodes, less those
// named in missed, with any node of caughtLater in place of tr's.
func fuzzySnap(tr *Tree, missed []string, caughtLater map[string]dumpNode) fuzzyState {
	nodes := dumpTree(tr)
	for _, p := range missed {
		delete(nodes, p)
	}
	for p, n := range caughtLater {
		nodes[p] = n
	}
	list := make([]dumpNode, 0, len(nodes))
	for _, n := range nodes {
		list = append(list, n)
	}
	// Children before parents, the order that needs the loader's linking.
	slices.SortFunc(list, func(a, b dumpNode) int { return strings.Compare(b.path, a.path) })
	return fuzzyState{nodes: list, sessions: tr.sessions}
}

type fuzzyState struct {
	nodes    []dumpNode
	sessions map[int64]int32
}

func fuzzyCase(t *testing.T, name string, snap fuzzyState, from int64, live *Tree, log []logged) {
	t.Helper()
	loaded, err := ReadSnapshot(bytes.NewReader(encodeSnapshot(from, snap.sessions, snap.nodes)))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, loaded)
	var r Result
	for i := range log {
		loaded.Apply(&log[i].h, &log[i].tx, &r)
		if err := invariantError(loaded); err != nil {
			t.Fatalf("%s: after replaying zxid %d: %v", name, log[i].h.Zxid, err)
		}
	}
	if loaded.Digest() != live.Digest() {
		t.Fatalf("%s: digest differs: %s", name, diffTrees(live, loaded))
	}
}

func TestFuzzyReplayRules(t *testing.T) {
	hz := func(z int64, session int64) txn.Header { return txn.Header{Zxid: z, SessionID: session, Time: z * 10} }
	cr := func(p string, cv int32) txn.Txn {
		return txn.Txn{Type: wire.OpCreate, Path: p, Data: []byte(p), ACL: wire.OpenACLUnsafe, ParentCVersion: cv}
	}
	del := func(p string) txn.Txn { return txn.Txn{Type: wire.OpDelete, Path: p} }
	run := func(tr *Tree, log []logged) *Tree {
		var r Result
		for i := range log {
			tr.Apply(&log[i].h, &log[i].tx, &r)
		}
		return tr
	}
	base := []logged{{hz(2, 0), cr("/p", 1)}, {hz(3, 0), cr("/p/a", 1)}}

	// The snapshot caught /p before it was deleted and re-created, and a
	// child of its new incarnation: replaying the delete of /p must take
	// the child with it, or the re-create leaves it orphaned.
	log := []logged{{hz(4, 0), del("/p/a")}, {hz(5, 0), del("/p")}, {hz(6, 0), cr("/p", 2)}, {hz(7, 0), cr("/p/b", 1)}}
	live := run(run(New(), base), log)
	snap := fuzzySnap(run(New(), []logged{base[0], {hz(7, 0), cr("/p/b", 1)}}), nil, nil)
	fuzzyCase(t, "future child", snap, 3, live, log)

	// The snapshot caught /p/a but not /p (deleted before the writer got to
	// it): the loader drops /p/a, whose delete is in the log.
	log = []logged{{hz(4, 0), del("/p/a")}, {hz(5, 0), del("/p")}}
	live = run(run(New(), base), log)
	snap = fuzzySnap(run(New(), base), []string{"/p"}, nil) // as if the walk never reached it
	fuzzyCase(t, "orphan of a deleted parent", snap, 3, live, log)

	// The snapshot caught /r/y but not /r (created where the range had
	// already passed): the loader drops /r/y, which the log re-creates.
	log = []logged{{hz(4, 0), cr("/r", 2)}, {hz(5, 0), cr("/r/y", 1)}}
	live = run(run(New(), base), log)
	snap = fuzzySnap(run(New(), append(append([]logged(nil), base...), log...)), []string{"/r"}, nil)
	fuzzyCase(t, "orphan of a new parent", snap, 3, live, log)

	// An ephemeral deleted by closeSession before the writer reached it
	// (the writer caught /p after the create): the txn names it, so its
	// parent's pzxid still moves.
	eph := cr("/p/e", 2)
	eph.Type = wire.OpCreate2
	eph.Ephemeral = true
	withEph := append(append([]logged(nil), base...), logged{hz(4, 7), eph})
	log = []logged{{hz(5, 7), txn.Txn{Type: wire.OpCloseSession, Paths: []string{"/p/e"}}}}
	live = run(run(New(), withEph), log)
	snap = fuzzySnap(run(New(), withEph), []string{"/p/e"}, nil)
	fuzzyCase(t, "closed session's ephemeral", snap, 4, live, log)

	// The writer caught /p before an ephemeral was created under it (with
	// create2, as Curator and most clients do) and the ephemeral after:
	// replaying its create is NodeExists but must still raise the parent's
	// counter and pzxid.
	log = []logged{withEph[2]}
	live = run(run(New(), base), log)
	snap = fuzzySnap(run(New(), withEph), nil, map[string]dumpNode{"/p": dumpTree(run(New(), base))["/p"]})
	fuzzyCase(t, "ephemeral created after its parent was written", snap, 3, live, log)
}
