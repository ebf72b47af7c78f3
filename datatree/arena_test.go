package datatree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/corral-db/corral/wire"
)

// TestArenaModel puts, replaces and frees records of random sizes (empty,
// null, small, and above largeRecord) on many nodes, and checks after
// every step that each node's name, data, version, mzxid and mtime
// (through Stat too) are what it was given, that
// slices handed out earlier never change, and that the arena's accounting
// matches its records: the live bytes of every chunk, and memory within
// twice the live records plus two chunks (evacuation at half).
func TestArenaModel(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		tr := newEmptyTree()
		a := &tr.recs
		type want struct {
			name         string
			data         []byte
			version      int32
			mzxid, mtime int64
		}
		model := map[*Node]want{}
		var live []*Node
		type held struct {
			got  []byte
			want []byte
		}
		var kept []held
		randData := func() []byte {
			switch r.IntN(10) {
			case 0:
				return nil
			case 1:
				return []byte{}
			case 2:
				return bytes.Repeat([]byte{byte(r.IntN(256))}, largeRecord+r.IntN(100))
			}
			b := make([]byte, r.IntN(300))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return b
		}
		// Versions of every uvarint length, and the negative ones a
		// wrapped counter and the config node's -1 give.
		randVersion := func() int32 {
			return int32(r.Uint32() >> uint(r.IntN(33)))
		}
		// mzxid and mtime at every distance from czxid and ctime,
		// below them too (a snapshot may hold anything).
		randAfter := func(from int64) int64 {
			if r.IntN(4) == 0 {
				return from
			}
			return from + int64(r.Uint64()>>uint(r.IntN(65)))*int64(1-2*r.IntN(2))
		}
		for step := 0; step < 20000; step++ {
			switch op := r.IntN(10); {
			case op < 5 || len(live) == 0:
				n := tr.nodes.alloc()
				name := fmt.Sprintf("n%d", r.IntN(1<<uint(r.IntN(30))))
				if r.IntN(50) == 0 {
					name = ""
				}
				n.czxid, n.ctime = r.Int64(), r.Int64()>>uint(r.IntN(64))
				d, v, z, tm := randData(), randVersion(), randAfter(n.czxid), randAfter(n.ctime)
				a.put(n, name, d, v, z, tm)
				model[n] = want{name, d, v, z, tm}
				live = append(live, n)
			case op < 8:
				n := live[r.IntN(len(live))]
				d, v, z, tm := randData(), randVersion(), randAfter(n.czxid), randAfter(n.ctime)
				a.put(n, n.baseName(), d, v, z, tm)
				model[n] = want{model[n].name, d, v, z, tm}
			default:
				i := r.IntN(len(live))
				n := live[i]
				if d := n.Data(); len(d) > 0 && r.IntN(4) == 0 {
					kept = append(kept, held{d, bytes.Clone(d)})
				}
				a.free(n)
				tr.nodes.release(n)
				delete(model, n)
				live[i] = live[len(live)-1]
				live = live[:len(live)-1]
			}
			if step%97 != 0 {
				continue
			}
			inChunks := 0
			for n, w := range model {
				if got := n.baseName(); got != w.name {
					t.Fatalf("seed %d step %d: name %q, want %q", seed, step, got, w.name)
				}
				got := n.Data()
				if !bytes.Equal(got, w.data) || (got == nil) != (w.data == nil) {
					t.Fatalf("seed %d step %d: node %q: data of %d bytes (nil %v), want %d (nil %v)",
						seed, step, w.name, len(got), got == nil, len(w.data), w.data == nil)
				}
				if got := n.version(); got != w.version {
					t.Fatalf("seed %d step %d: node %q: version %d, want %d", seed, step, w.name, got, w.version)
				}
				var st wire.Stat
				n.Stat(&st)
				if st.Version != w.version || int(st.DataLength) != len(w.data) {
					t.Fatalf("seed %d step %d: node %q: stat version %d, length %d; want %d, %d",
						seed, step, w.name, st.Version, st.DataLength, w.version, len(w.data))
				}
				if st.Mzxid != w.mzxid || st.Mtime != w.mtime || n.mzxid() != w.mzxid || n.mtime() != w.mtime {
					t.Fatalf("seed %d step %d: node %q: mzxid %d/%d, mtime %d/%d; want %d, %d",
						seed, step, w.name, st.Mzxid, n.mzxid(), st.Mtime, n.mtime(), w.mzxid, w.mtime)
				}
				if p := n.Persisted(); p.Mzxid != w.mzxid || p.Mtime != w.mtime || p.Czxid != n.czxid || p.Ctime != n.ctime {
					t.Fatalf("seed %d step %d: node %q: persisted stat %+v, want mzxid %d mtime %d", seed, step, w.name, p, w.mzxid, w.mtime)
				}
				if c, _ := a.chunkOf(n.rec); c != nil {
					inChunks += recHeader + n.recSize()
				}
			}
			sum, mem := 0, 0
			for _, c := range a.chunks {
				sum += c.live
				mem += cap(c.buf)
			}
			if sum != inChunks {
				t.Fatalf("seed %d step %d: chunks count %d live bytes, the nodes' records are %d", seed, step, sum, inChunks)
			}
			if int64(mem) != a.bytes {
				t.Fatalf("seed %d step %d: arena counts %d bytes, its chunks are %d", seed, step, a.bytes, mem)
			}
			if mem > 2*inChunks+2*chunkSize {
				t.Fatalf("seed %d step %d: %d bytes of chunks for %d live", seed, step, mem, inChunks)
			}
		}
		for i, h := range kept {
			if !bytes.Equal(h.got, h.want) {
				t.Fatalf("seed %d: slice %d handed out before its record was freed changed", seed, i)
			}
		}
	}
}

// TestArenaGrowOnly: a tree that only grows keeps its records packed, each
// costing its bytes and a header, chunks all but full.
func TestArenaGrowOnly(t *testing.T) {
	tr := newEmptyTree()
	total := 0
	for i := 0; i < 100000; i++ {
		n := tr.nodes.alloc()
		name := fmt.Sprintf("item-%010d", i)
		tr.recs.put(n, name, make([]byte, 100), 0, 0, 0)
		// The header, the name's length, the name, the data's length,
		// the version, mzxid and mtime (one byte each for these), the
		// data.
		total += recHeader + 1 + len(name) + 1 + 1 + 1 + 1 + 100
	}
	if limit := int64(total) + int64(total)/100 + chunkSize; tr.recs.bytes > limit {
		t.Errorf("%d bytes of records take %d bytes of chunks (limit %d)", total, tr.recs.bytes, limit)
	}
}
