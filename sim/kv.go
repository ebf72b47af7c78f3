package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/zab"
)

// kvMachines runs the key-value store (kv.Store: pebble without its WAL,
// the zab log the only write-ahead log) as every server's state machine,
// each on its own crashable in-memory file system. A crash keeps exactly
// what pebble had synced: what the store's last flush wrote, so a restart
// resumes at that applied zxid and the log replays the rest. Memtables
// are pebble's default size, far above what a run writes, so pebble never
// flushes by itself and what a crash keeps does not depend on its
// background goroutines.
//
// The workload is puts, deletes, check-and-puts and check-and-deletes on
// a few rows of one table (and now and then a create or drop of it); half
// of them carry request ids of a few clients, whose writes are sent again
// now and then (deduplication: a repeat answers the first result, an
// older sequence is refused). A
// model (kvModel) applies the committed history independently, and the
// servers are checked against it:
//
//   - every replica computes the result the model does for every entry
//     (a check-and-put's outcome, a missing table);
//   - every replica's contents (kv.Store.Fingerprint) are the same at
//     the same applied zxid, after every Apply, restart and install;
//   - reads (kv.Store.Get) return what the model holds at the server's
//     applied zxid: every committed put is there, with the versions its
//     family keeps, until overwritten or deleted;
//   - a restart resumes at a zxid the store had applied, at or above what
//     it last reported durable, and re-applying entries at or below it
//     changes nothing (idempotent apply).
type kvMachines struct {
	rng   *rand.Rand
	fs    map[uint64]*vfs.MemFS
	model *kvModel
	// chain and prints are the hash-chain digest and the store's
	// fingerprint after each zxid, as first seen on any server.
	chain  map[zab.Zxid]uint64
	prints map[zab.Zxid]uint64
	reqID  uint64
	// The workload's request-id clients: the last sequence each used and
	// the mutations it sent, which it sends again now and then (a retry
	// after an unknown outcome, or a stale one).
	seqs [kvClients]uint64
	sent [kvClients][]*kv.Mutation
	// gate is the compaction-aware leader change (kvgate.go).
	gate *kvGate
	// breaks break the store's rules (the self-test, bite_test.go).
	breaks kv.Breaks
}

const kvClients = 4

// NewKVMachines returns the Machines of a run of the key-value store.
func NewKVMachines(seed uint64) Machines {
	return &kvMachines{
		rng:    rand.New(rand.NewPCG(seed, 0x6b76)),
		fs:     map[uint64]*vfs.MemFS{},
		model:  newKVModel(),
		chain:  map[zab.Zxid]uint64{},
		prints: map[zab.Zxid]uint64{},
		gate:   newKVGate(seed),
	}
}

func (k *kvMachines) Name() string { return "kv" }

const kvTable = "t"

// The workload's key space: rows × families × qualifiers.
var (
	kvRows     = []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	kvFamilies = []kv.FamilySpec{{Name: "a", MaxVersions: 1}, {Name: "b", MaxVersions: 3}}
	kvQuals    = []string{"q0", "q1", "q2"}
)

func (k *kvMachines) Payload(n int) []byte {
	r := k.rng
	k.reqID++
	if c := r.IntN(kvClients); n > 0 && len(k.sent[c]) > 0 && r.IntN(8) == 0 {
		// A retry: the last write of client c again, or now and then an
		// older one; either with a request id of its own.
		sent := k.sent[c]
		i := len(sent) - 1
		if r.IntN(4) == 0 {
			i = r.IntN(len(sent))
		}
		m := *sent[i]
		m.ReqID = k.reqID
		return k.encode(&m)
	}
	m := &kv.Mutation{ReqID: k.reqID, Table: kvTable, Row: []byte(kvRows[r.IntN(len(kvRows))])}
	cell := func() kv.Cell {
		return kv.Cell{Family: kvFamilies[r.IntN(len(kvFamilies))].Name,
			Qualifier: []byte(kvQuals[r.IntN(len(kvQuals))]), Value: fmt.Appendf(nil, "v%d", n)}
	}
	cond := func() kv.Condition {
		c := kv.Condition{Family: kvFamilies[r.IntN(len(kvFamilies))].Name, Qualifier: []byte(kvQuals[r.IntN(len(kvQuals))])}
		if v, ok := k.model.newest(string(m.Row), c.Family, string(c.Qualifier)); ok && r.IntN(4) != 0 {
			c.Value = []byte(v) // likely to hold, unless a write overtakes it
		} else {
			c.Absent = r.IntN(2) == 0
			c.Value = fmt.Appendf(nil, "v%d", r.IntN(max(n, 1)))
		}
		return c
	}
	switch x := r.IntN(100); {
	case n == 0 || x < 2:
		m.Op, m.Row, m.Families = kv.OpCreateTable, nil, kvFamilies
	case x < 3:
		m.Op, m.Row = kv.OpDropTable, nil
	case x < 60:
		m.Op = kv.OpPut
		for range 1 + r.IntN(3) {
			m.Cells = append(m.Cells, cell())
		}
	case x < 80:
		m.Op, m.Cells, m.Cond = kv.OpCheckAndPut, []kv.Cell{cell()}, cond()
	case x < 90:
		m.Op = kv.OpDelete
		m.Delete = kvDelete(r)
	default:
		m.Op, m.Delete, m.Cond = kv.OpCheckAndDelete, kvDelete(r), cond()
	}
	if c := r.IntN(2 * kvClients); c < kvClients {
		k.seqs[c]++
		m.Client, m.Seq = uint64(c+1), k.seqs[c]
		k.sent[c] = append(k.sent[c], m)
		if len(k.sent[c]) > 8 {
			k.sent[c] = k.sent[c][1:]
		}
	}
	return k.encode(m)
}

func (k *kvMachines) encode(m *kv.Mutation) []byte {
	b, err := m.Encode()
	if err != nil {
		panic(fmt.Sprintf("sim: workload mutation: %v", err)) // a bug of this file
	}
	return b
}

func kvDelete(r *rand.Rand) kv.Delete {
	d := kv.Delete{Scope: kv.Scope(1 + r.IntN(3))}
	if d.Scope != kv.ScopeRow {
		d.Family = kvFamilies[r.IntN(len(kvFamilies))].Name
	}
	if d.Scope == kv.ScopeColumn {
		d.Qualifier = []byte(kvQuals[r.IntN(len(kvQuals))])
	}
	return d
}

func (k *kvMachines) Open(id uint64) (Machine, machine, error) {
	fs := k.fs[id]
	if fs == nil {
		fs = vfs.NewCrashableMem()
		k.fs[id] = fs
	}
	st, err := kv.Open(kv.Options{FS: fs, Dir: "kv", Logger: slog.New(slog.DiscardHandler), GateCompactions: true, Breaks: k.breaks})
	if err != nil {
		return nil, machine{}, err
	}
	m := &kvMachine{k: k, id: id, fs: fs, st: st}
	z, err := m.fingerprint()
	if err != nil {
		st.Close()
		return nil, machine{}, err
	}
	if z != 0 {
		if err := m.replay(z); err != nil {
			st.Close()
			return nil, machine{}, err
		}
	}
	m.m = machine{zxid: z, digest: k.chain[z]}
	k.gate.opened(id, st)
	return m, m.m, nil
}

// kvMachine is one incarnation of a server's store.
type kvMachine struct {
	k  *kvMachines
	id uint64
	fs *vfs.MemFS
	st *kv.Store
	m  machine
}

// fingerprint checks the store's contents against those every other
// replica had at the same zxid (recording them if first) and returns
// the zxid.
func (m *kvMachine) fingerprint() (zab.Zxid, error) {
	z, fp, err := m.st.Fingerprint()
	if err != nil {
		return 0, err
	}
	if z == 0 {
		if fp != 0 {
			return 0, fmt.Errorf("kv: store with nothing applied holds data (fingerprint %x)", fp)
		}
		return 0, nil
	}
	if _, ok := m.k.chain[z]; !ok {
		return 0, fmt.Errorf("kv: store at %v, which no replica applied", z)
	}
	if old, ok := m.k.prints[z]; ok && old != fp {
		return 0, fmt.Errorf("kv: contents at %v differ from another replica's at the same zxid (fingerprint %x, first %x)", z, fp, old)
	}
	m.k.prints[z] = fp
	return z, nil
}

// replay re-applies up to three committed entries at or below z, which
// the store must skip: its contents stay what they were.
func (m *kvMachine) replay(z zab.Zxid) error {
	ents := m.k.model.ents
	i, _ := slices.BinarySearchFunc(ents, z, func(e zab.Entry, z zab.Zxid) int { return cmpZxid(e.Zxid, z) })
	if i < len(ents) && ents[i].Zxid == z {
		i++
	}
	if err := m.st.Apply(ents[max(0, i-3):i]); err != nil {
		return err
	}
	if _, err := m.fingerprint(); err != nil {
		return fmt.Errorf("kv: replay at or below the applied zxid changed the store: %w", err)
	}
	return nil
}

func cmpZxid(a, b zab.Zxid) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (m *kvMachine) Apply(ents []zab.Entry) ([]machine, error) {
	type wait struct {
		ch     <-chan kv.Result
		cancel func()
	}
	waits := make([]wait, len(ents))
	for i, e := range ents {
		if mu, err := kv.DecodeMutation(e.Data); err == nil && mu.ReqID != 0 {
			waits[i].ch, waits[i].cancel = m.st.Await(mu.ReqID)
		}
	}
	defer func() {
		for _, w := range waits {
			if w.cancel != nil {
				w.cancel()
			}
		}
	}()
	if err := m.st.Apply(ents); err != nil {
		return nil, err
	}
	out := make([]machine, len(ents))
	for i, e := range ents {
		m.m.apply(e)
		out[i] = m.m
		m.k.gate.applied(m.id, len(e.Data))
		if _, ok := m.k.chain[e.Zxid]; !ok {
			m.k.chain[e.Zxid] = m.m.digest
		}
		want, ok, err := m.k.model.commit(e)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // not a mutation: the driver's own, or the settle marker
		}
		var got kv.Result
		select {
		case got = <-waits[i].ch:
		default:
			return nil, fmt.Errorf("kv: %v applied without a result", e.Zxid)
		}
		if err := want.matches(got); err != nil {
			return nil, fmt.Errorf("kv: result of %v: %w", e.Zxid, err)
		}
	}
	if len(ents) > 0 {
		z, err := m.fingerprint()
		if err != nil {
			return nil, err
		}
		if last := ents[len(ents)-1].Zxid; z != last {
			return nil, fmt.Errorf("kv: store applied %v after applying up to %v", z, last)
		}
	}
	return out, nil
}

func (m *kvMachine) Persist() (machine, error) {
	z, err := m.st.Snapshot(context.Background())
	if err != nil {
		return machine{}, err
	}
	if z != m.m.zxid || m.st.Durable() < z {
		return machine{}, fmt.Errorf("kv: flushed %v (durable %v) with %v applied", z, m.st.Durable(), m.m.zxid)
	}
	return m.m, nil
}

func (m *kvMachine) WriteSnapshot(w io.Writer) (zab.Zxid, error) {
	return m.st.WriteSnapshot(context.Background(), w)
}

func (m *kvMachine) InstallSnapshot(r io.Reader) (machine, error) {
	z, err := m.st.InstallSnapshot(context.Background(), r)
	if err != nil {
		return machine{}, err
	}
	if got, err := m.fingerprint(); err != nil {
		return machine{}, err
	} else if got != z {
		return machine{}, fmt.Errorf("kv: installed a snapshot of %v, store at %v", z, got)
	}
	if m.st.Durable() < z {
		return machine{}, fmt.Errorf("kv: installed %v, durable only %v", z, m.st.Durable())
	}
	m.m = machine{zxid: z, digest: m.k.chain[z]}
	m.k.gate.installed(m.id)
	return m.m, nil
}

// Crash keeps what the file system had synced and drops the rest: the
// next Open reads the clone.
func (m *kvMachine) Crash() {
	m.k.fs[m.id] = m.fs.CrashClone(vfs.CrashCloneCfg{})
	_ = m.st.Close() // flushes to the old file system, which is discarded
}

func (m *kvMachine) Close() { _ = m.st.Close() }

func (m *kvMachine) Check(all bool) error {
	rows := kvRows
	if !all {
		rows = []string{kvRows[m.k.rng.IntN(len(kvRows))]}
	}
	z := m.st.Applied()
	for _, row := range rows {
		got, err := m.st.Get(kvTable, []byte(row), kv.ReadOptions{MaxVersions: 3})
		want, exists := m.k.model.read(z, row)
		switch {
		case !exists:
			if !errors.Is(err, kv.ErrNoTable) {
				return fmt.Errorf("kv: get %s at %v: %v (%d cells), want no table", row, z, err, len(got))
			}
			continue
		case errors.Is(err, kv.ErrNotFound):
			got = nil
		case err != nil:
			return fmt.Errorf("kv: get %s at %v: %w", row, z, err)
		}
		if g, w := cellsText(got), cellsText(want); g != w {
			return fmt.Errorf("kv: row %s at %v reads %s, committed history has %s", row, z, g, w)
		}
	}
	return nil
}

func cellsText(cs []kv.CellVersion) string {
	out := "["
	for _, c := range cs {
		out += fmt.Sprintf(" %s:%s@%v=%s", c.Family, c.Qualifier, zab.Zxid(c.Version), c.Value)
	}
	return out + " ]"
}
