package rlog

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// TestLocalCrash crashes the file system (keeping a random part of what
// was not synced) while writers append to three logs, and checks after a
// restart that every acknowledged append reads back with its exact bytes
// at its offset, and that no log's committed end is below what a reader
// saw committed before the crash.
func TestLocalCrash(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		mem := vfs.NewMem()
		lc := openLocal(t, mem)
		names := []string{"l0", "l1", "l2"}
		for _, n := range names {
			must(t, lc, Mutation{Op: OpCreate, Name: n})
		}
		type ack struct {
			log  string
			off  int64
			data []byte
		}
		var mu sync.Mutex
		var acks []ack
		seen := map[string]int64{}
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, uint64(w)))
				for i := 0; i < 400; i++ {
					n := names[r.IntN(3)]
					p := make([]byte, 1+r.IntN(3000))
					for j := range p {
						p[j] = byte(r.IntN(256))
					}
					res, err := lc.Do(context.Background(), NewAppend(n, NoOffset, p))
					if err != nil || res.Err != nil {
						return
					}
					st, err := lc.State().Stat(n)
					mu.Lock()
					acks = append(acks, ack{n, res.Offset, p})
					if err == nil && st.Committed > seen[n] {
						seen[n] = st.Committed
					}
					mu.Unlock()
				}
			}()
		}
		// Crash once some appends were acknowledged.
		for {
			mu.Lock()
			n := len(acks)
			mu.Unlock()
			if n >= 20+int(seed)*10 {
				break
			}
		}
		mem.CrashRandom(rand.New(rand.NewPCG(seed, 0)))
		wg.Wait()
		lc.Close()

		lc = openLocal(t, mem)
		s := lc.State()
		for _, a := range acks {
			r, err := s.Read(context.Background(), a.log, a.off, int64(len(a.data)), false)
			if err != nil || !bytes.Equal(r.Data, a.data) {
				t.Fatalf("seed %d: acknowledged append to %s at %d (%d bytes) lost or damaged: %v (%d bytes read)",
					seed, a.log, a.off, len(a.data), err, len(r.Data))
			}
		}
		for n, c := range seen {
			st, err := s.Stat(n)
			if err != nil || st.Committed < c {
				t.Fatalf("seed %d: %s committed %d after the crash, %d was seen before: %v", seed, n, st.Committed, c, err)
			}
		}
		// Appends after the restart take the offsets of the appends lost
		// in the crash; their payloads, still in the data log if the WAL
		// record was lost, must not shadow the new ones.
		for _, n := range names {
			p := bytes.Repeat([]byte{0xAB}, 5000)
			res := must(t, lc, NewAppend(n, NoOffset, p))
			r, err := s.Read(context.Background(), n, res.Offset, int64(len(p)), false)
			if err != nil || !bytes.Equal(r.Data, p) {
				t.Fatalf("seed %d: append to %s at %d after the restart reads back wrong: %v", seed, n, res.Offset, err)
			}
		}
		lc.Close()
	}
}

// TestPortableSnapshot: a State installed from another's image reads the
// same bytes and continues at the same offsets; a damaged image fails.
func TestPortableSnapshot(t *testing.T) {
	lc := openLocal(t, vfs.NewMem())
	defer lc.Close()
	want := map[string][]byte{}
	for _, n := range []string{"p", "q"} {
		must(t, lc, Mutation{Op: OpCreate, Name: n})
	}
	for i := range 40 {
		n := []string{"p", "q"}[i%2]
		b := bytes.Repeat([]byte{byte(i + 1)}, 300+i*50)
		must(t, lc, NewAppend(n, NoOffset, b))
		want[n] = append(want[n], b...)
	}
	must(t, lc, Mutation{Op: OpTrim, Name: "q", Offset: 2000})
	var img bytes.Buffer
	z, err := lc.State().WriteSnapshot(context.Background(), &img)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(Options{FS: vfs.NewMem(), Dir: "o", DataLog: localOpts(nil).State.DataLog})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Something already there is replaced.
	other.Apply([]zab.Entry{{Zxid: 1, Data: Encode(nil, &Mutation{Op: OpCreate, Name: "stale"})}})
	got, err := other.InstallSnapshot(context.Background(), bytes.NewReader(img.Bytes()))
	if err != nil || got != z {
		t.Fatalf("install: %v, zxid %v want %v", err, got, z)
	}
	if _, err := other.Stat("stale"); err == nil {
		t.Fatal("a log not in the image survived its installation")
	}
	if b := readAll(t, other, "p", 0); !bytes.Equal(b, want["p"]) {
		t.Fatal("p differs after install")
	}
	if b := readAll(t, other, "q", 2000); !bytes.Equal(b, want["q"][2000:]) {
		t.Fatal("q differs after install")
	}
	a, _ := lc.State().Stat("q")
	b, _ := other.Stat("q")
	if a.Start != b.Start || a.End != b.End || a.ID != b.ID {
		t.Fatalf("stat %+v vs %+v", a, b)
	}
	for _, cut := range []int{10, img.Len() / 2, img.Len() - 1} {
		bad := append([]byte(nil), img.Bytes()[:cut]...)
		if _, err := other.InstallSnapshot(context.Background(), bytes.NewReader(bad)); err == nil {
			t.Fatalf("install of an image cut at %d succeeded", cut)
		}
	}
	flip := append([]byte(nil), img.Bytes()...)
	flip[len(flip)/2] ^= 1
	if _, err := other.InstallSnapshot(context.Background(), bytes.NewReader(flip)); err == nil {
		t.Fatal("install of a damaged image succeeded")
	}
}

// TestApplyDeterministic: two members apply the same entries, one with
// payloads persisted ahead by the store hook (Persist), one writing them
// at apply; interleaved failures (a wrong offset prepared by a deposed
// leader) included. They end with equal metadata and bytes, whatever their
// data logs' physical layout.
func TestApplyDeterministic(t *testing.T) {
	newState := func(seg int64) *State {
		o := localOpts(vfs.NewMem()).State
		o.DataLog.SegmentSize = seg
		s, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := newState(1<<16), newState(1<<13)
	defer a.Close()
	defer b.Close()
	var ents []zab.Entry
	z := zab.Zxid(1 << 32)
	add := func(m Mutation) {
		z++
		ents = append(ents, zab.Entry{Zxid: z, Data: Encode(nil, &m)})
	}
	add(Mutation{Op: OpCreate, Name: "d"})
	id := uint64(z)
	var off int64
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 100 {
		p := bytes.Repeat([]byte{byte(i)}, 1+r.IntN(2000))
		m := NewAppend("d", NoOffset, p)
		m.Log, m.Offset = id, off
		if i%17 == 5 {
			m.Offset = off + 1 // a stale proposal: fails the same everywhere
		} else {
			off += int64(len(p))
		}
		add(m)
		if i == 60 {
			add(Mutation{Op: OpTrim, Name: "d", Offset: off / 2})
		}
	}
	for _, e := range ents {
		if _, _, err := a.Persist(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Apply(ents); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(ents); err != nil {
		t.Fatal(err)
	}
	// Committed is each member's own (what its data log synced): wait.
	for _, s := range []*State{a, b} {
		if err := s.WaitData(context.Background(), s.dl.Written()); err != nil {
			t.Fatal(err)
		}
	}
	sa, _ := a.Stat("d")
	sb, _ := b.Stat("d")
	if sa != sb || sa.End != off {
		t.Fatalf("stats differ: %+v vs %+v (end want %d)", sa, sb, off)
	}
	ba, bb := readAll(t, a, "d", sa.Start), readAll(t, b, "d", sb.Start)
	if !bytes.Equal(ba, bb) || int64(len(ba)) != off-sa.Start {
		t.Fatal(fmt.Sprintf("bytes differ: %d vs %d", len(ba), len(bb)))
	}
}

// TestInstallSurvivesRestart: after InstallSnapshot the state is durable
// on its own (local snapshot over the new records, old ones released);
// an image that fails midway leaves the old state whole.
func TestInstallSurvivesRestart(t *testing.T) {
	src := openLocal(t, vfs.NewMem())
	defer src.Close()
	must(t, src, Mutation{Op: OpCreate, Name: "n"})
	var want []byte
	for i := range 20 {
		b := bytes.Repeat([]byte{byte(i + 1)}, 3000)
		must(t, src, NewAppend("n", NoOffset, b))
		want = append(want, b...)
	}
	var img bytes.Buffer
	if _, err := src.State().WriteSnapshot(context.Background(), &img); err != nil {
		t.Fatal(err)
	}
	mem := vfs.NewMem()
	dst := openLocal(t, mem)
	must(t, dst, Mutation{Op: OpCreate, Name: "old"})
	must(t, dst, NewAppend("old", NoOffset, bytes.Repeat([]byte{9}, 50000)))
	// A damaged image changes nothing.
	if _, err := dst.State().InstallSnapshot(context.Background(), bytes.NewReader(img.Bytes()[:img.Len()-3])); err == nil {
		t.Fatal("install of a cut image succeeded")
	}
	if got := readAll(t, dst.State(), "old", 0); len(got) != 50000 {
		t.Fatalf("a failed install damaged the state: %d bytes", len(got))
	}
	before := dst.State().dl.Segments()
	if _, err := dst.State().InstallSnapshot(context.Background(), bytes.NewReader(img.Bytes())); err != nil {
		t.Fatal(err)
	}
	var live int64
	for _, sg := range dst.State().dl.Segments() {
		live += sg.Live
	}
	if live > int64(len(want))+20*datalog.RecordSize(0)+1<<20 {
		t.Fatalf("%d live bytes after the install (segments before %v): the old records were not released", live, before)
	}
	dst.Close()
	mem.Crash()
	dst = openLocal(t, mem)
	defer dst.Close()
	if got := readAll(t, dst.State(), "n", 0); !bytes.Equal(got, want) {
		t.Fatal("the installed log differs after a restart")
	}
	if _, err := dst.State().Stat("old"); err == nil {
		t.Fatal("a log the image does not hold survived")
	}
}

// TestCrashDuringInstall: a crash after an image's bytes are written but
// before the local snapshot naming them leaves the old state whole, and
// the image's records are cut at the next start.
func TestCrashDuringInstall(t *testing.T) {
	src := openLocal(t, vfs.NewMem())
	defer src.Close()
	must(t, src, Mutation{Op: OpCreate, Name: "n"})
	must(t, src, NewAppend("n", NoOffset, bytes.Repeat([]byte{1}, 40000)))
	var img bytes.Buffer
	if _, err := src.State().WriteSnapshot(context.Background(), &img); err != nil {
		t.Fatal(err)
	}
	mem := vfs.NewMem()
	dst := openLocal(t, mem)
	must(t, dst, Mutation{Op: OpCreate, Name: "old"})
	old := bytes.Repeat([]byte{2}, 30000)
	must(t, dst, NewAppend("old", NoOffset, old))
	written := dst.State().dl.Written()
	// The first half of InstallSnapshot, then the crash.
	if _, _, err := dst.State().install(context.Background(), bytes.NewReader(img.Bytes())); err != nil {
		t.Fatal(err)
	}
	if !written.Less(dst.State().dl.Synced()) {
		t.Fatal("the image's records were not written and synced")
	}
	dst.Close()
	mem.Crash()
	dst = openLocal(t, mem)
	defer dst.Close()
	if got := readAll(t, dst.State(), "old", 0); !bytes.Equal(got, old) {
		t.Fatalf("the old log after a crash during an install: %d bytes", len(got))
	}
	if _, err := dst.State().Stat("n"); err == nil {
		t.Fatal("the half-installed image's log exists")
	}
	if w := dst.State().dl.Written(); w != written {
		t.Fatalf("the data log ends at %v after the restart, want the image's records cut back to %v", w, written)
	}
}
