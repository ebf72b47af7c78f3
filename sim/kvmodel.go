package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/zab"
)

// kvModel is the key-value semantics the simulated stores must show,
// written independently of kv/: the committed history (entries as first
// applied anywhere) and, per column, every put and delete of it, from
// which it answers what a read at any applied zxid returns.
type kvModel struct {
	last    zab.Zxid
	ents    []zab.Entry // the committed history
	results map[zab.Zxid]kvResult
	tables  []tableEvent // the workload's table: created and dropped
	cols    map[kvCol][]cellEvent
	// clients is the request-id table: per client, the last sequence
	// applied and its result.
	clients map[uint64]clientSeq
	// counts of what the history held (the workload's coverage)
	repeats, stale, condHeld, condFailed int
}

type clientSeq struct {
	seq uint64
	res kvResult
}

type kvCol struct{ row, family, qual string }

type cellEvent struct {
	z   zab.Zxid
	del bool
	val string
}

type tableEvent struct {
	z      zab.Zxid
	exists bool
}

// kvResult is what applying a mutation must answer: err (a kv sentinel)
// or, when nil, whether a conditional mutation's condition held.
type kvResult struct {
	zxid      zab.Zxid // the entry that applied it (the first, for a repeat)
	err       error
	succeeded bool
}

func (w kvResult) matches(got kv.Result) error {
	if got.Zxid != w.zxid {
		return fmt.Errorf("got %+v, want the result of %v", got, w.zxid)
	}
	if w.err != nil {
		if !errors.Is(got.Err, w.err) {
			return fmt.Errorf("got %+v, want %v", got, w.err)
		}
		return nil
	}
	if got.Err != nil || got.Succeeded != w.succeeded {
		return fmt.Errorf("got %+v, want succeeded=%v", got, w.succeeded)
	}
	return nil
}

func newKVModel() *kvModel {
	return &kvModel{results: map[zab.Zxid]kvResult{}, cols: map[kvCol][]cellEvent{}, clients: map[uint64]clientSeq{}}
}

// commit takes an applied entry: a new one extends the committed history
// (the checker makes sure every server applies that history in order).
// It returns the result the entry must have, and false for an entry that
// is not a mutation.
func (m *kvModel) commit(e zab.Entry) (kvResult, bool, error) {
	if e.Zxid <= m.last {
		if r, ok := m.results[e.Zxid]; ok {
			return r, true, nil
		}
		if _, found := slices.BinarySearchFunc(m.ents, e.Zxid, func(x zab.Entry, z zab.Zxid) int { return cmpZxid(x.Zxid, z) }); found {
			return kvResult{}, false, nil
		}
		return kvResult{}, false, fmt.Errorf("kv: applied %v, which is not in the committed history (last %v)", e.Zxid, m.last)
	}
	m.last = e.Zxid
	m.ents = append(m.ents, e)
	mu, err := kv.DecodeMutation(e.Data)
	if err != nil {
		return kvResult{}, false, nil
	}
	var r kvResult
	switch last, ok := m.clients[mu.Client]; {
	case mu.Client != 0 && ok && mu.Seq == last.seq:
		r = last.res // a repeat: not applied
		m.repeats++
	case mu.Client != 0 && ok && mu.Seq < last.seq:
		r = kvResult{zxid: e.Zxid, err: kv.ErrStaleRequest}
		m.stale++
	default:
		r = m.apply(mu, e.Zxid)
		r.zxid = e.Zxid
		if mu.Client != 0 {
			m.clients[mu.Client] = clientSeq{mu.Seq, r}
		}
	}
	m.results[e.Zxid] = r
	return r, true, nil
}

func (m *kvModel) exists(z zab.Zxid) bool {
	ok := false
	for _, t := range m.tables {
		if t.z > z {
			break
		}
		ok = t.exists
	}
	return ok
}

func (m *kvModel) apply(mu *kv.Mutation, z zab.Zxid) kvResult {
	exists := m.exists(z)
	row := string(mu.Row)
	switch mu.Op {
	case kv.OpCreateTable:
		if exists {
			return kvResult{err: kv.ErrTableExists}
		}
		m.tables = append(m.tables, tableEvent{z, true})
		return kvResult{succeeded: true}
	case kv.OpDropTable:
		if !exists {
			return kvResult{err: kv.ErrNoTable}
		}
		m.tables = append(m.tables, tableEvent{z, false})
		m.deleteWhere(z, func(kvCol) bool { return true })
		return kvResult{succeeded: true}
	}
	if !exists {
		return kvResult{err: kv.ErrNoTable}
	}
	if mu.Op == kv.OpCheckAndPut || mu.Op == kv.OpCheckAndDelete {
		v, found := m.newest(row, mu.Cond.Family, string(mu.Cond.Qualifier))
		if mu.Cond.Absent == found || (!mu.Cond.Absent && v != string(mu.Cond.Value)) {
			m.condFailed++
			return kvResult{succeeded: false}
		}
		m.condHeld++
	}
	switch mu.Op {
	case kv.OpPut, kv.OpCheckAndPut:
		for _, c := range mu.Cells {
			col := kvCol{row, c.Family, string(c.Qualifier)}
			evs := m.cols[col]
			if n := len(evs); n > 0 && evs[n-1].z == z {
				evs[n-1].val = string(c.Value) // one put writing a cell twice: the last wins
				continue
			}
			m.cols[col] = append(evs, cellEvent{z: z, val: string(c.Value)})
		}
	default:
		d := mu.Delete
		m.deleteWhere(z, func(c kvCol) bool {
			return c.row == row && (d.Scope == kv.ScopeRow || c.family == d.Family && (d.Scope == kv.ScopeFamily || c.qual == string(d.Qualifier)))
		})
	}
	return kvResult{succeeded: true}
}

func (m *kvModel) deleteWhere(z zab.Zxid, match func(kvCol) bool) {
	for _, row := range kvRows {
		for _, f := range kvFamilies {
			for _, q := range kvQuals {
				if c := (kvCol{row, f.Name, q}); match(c) {
					m.cols[c] = append(m.cols[c], cellEvent{z: z, del: true})
				}
			}
		}
	}
}

// newest returns a column's newest value at the end of the history.
func (m *kvModel) newest(row, family, qual string) (string, bool) {
	evs := m.cols[kvCol{row, family, qual}]
	if n := len(evs); n > 0 && !evs[n-1].del {
		return evs[n-1].val, true
	}
	return "", false
}

// read returns what a get of row (every family, up to 3 versions) reads
// once z has applied, and whether the table exists then.
func (m *kvModel) read(z zab.Zxid, row string) ([]kv.CellVersion, bool) {
	if !m.exists(z) {
		return nil, false
	}
	var out []kv.CellVersion
	for _, f := range kvFamilies {
		keep := min(int(max(f.MaxVersions, 1)), 3)
		for _, q := range kvQuals {
			var puts []cellEvent
			for _, e := range m.cols[kvCol{row, f.Name, q}] {
				if e.z > z {
					break
				}
				if e.del {
					puts = puts[:0]
				} else {
					puts = append(puts, e)
				}
			}
			for i := len(puts) - 1; i >= 0 && i >= len(puts)-keep; i-- {
				out = append(out, kv.CellVersion{Family: f.Name, Qualifier: []byte(q), Version: uint64(puts[i].z), Value: []byte(puts[i].val)})
			}
		}
	}
	return out, true
}
