package rlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
)

func localOpts(fsys vfs.FS) LocalOptions {
	return LocalOptions{
		State: Options{FS: fsys, Dir: "m", MaxAppend: 1 << 16,
			DataLog: datalog.Options{SegmentSize: 1 << 16, MaxInflight: 1 << 18, PrepareInline: true}},
		WAL: wal.Options{SegmentSize: 1 << 16, PrepareInline: true},
	}
}

func openLocal(t *testing.T, fsys vfs.FS, mod ...func(*LocalOptions)) *Local {
	t.Helper()
	o := localOpts(fsys)
	for _, f := range mod {
		f(&o)
	}
	lc, err := OpenLocal(o)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

func do(t *testing.T, lc *Local, m Mutation) Result {
	t.Helper()
	res, err := lc.Do(context.Background(), m)
	if err != nil {
		t.Fatalf("%v %s: %v", m.Op, m.Name, err)
	}
	return res
}

func must(t *testing.T, lc *Local, m Mutation) Result {
	t.Helper()
	res := do(t, lc, m)
	if res.Err != nil {
		t.Fatalf("%v %s: %v", m.Op, m.Name, res.Err)
	}
	return res
}

func readAll(t *testing.T, s *State, name string, from int64) []byte {
	t.Helper()
	var out []byte
	for {
		r, err := s.Read(context.Background(), name, from, 1000, false)
		if err != nil {
			t.Fatalf("read %s at %d: %v", name, from, err)
		}
		if len(r.Data) == 0 {
			return out
		}
		out = append(out, r.Data...)
		from = r.Next
	}
}

func wantCode(t *testing.T, err error, c Code) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != c {
		t.Fatalf("got %v, want code %v", err, c)
	}
	return e
}

func TestLocalOperations(t *testing.T) {
	lc := openLocal(t, vfs.NewMem())
	defer lc.Close()
	s := lc.State()
	must(t, lc, Mutation{Op: OpCreate, Name: "a"})
	wantCode(t, do(t, lc, Mutation{Op: OpCreate, Name: "a"}).Err, CodeExists)
	wantCode(t, do(t, lc, Mutation{Op: OpCreate, Name: "bad/name"}).Err, CodeBadRequest)
	var all []byte
	for i := range 50 {
		p := bytes.Repeat([]byte{byte(i)}, 100+i*37)
		res := must(t, lc, NewAppend("a", NoOffset, p))
		if res.Offset != int64(len(all)) {
			t.Fatalf("append %d at %d, want %d", i, res.Offset, len(all))
		}
		all = append(all, p...)
	}
	if got := readAll(t, s, "a", 0); !bytes.Equal(got, all) {
		t.Fatalf("read %d bytes, appended %d (equal: %v)", len(got), len(all), bytes.Equal(got, all))
	}
	if got := readAll(t, s, "a", 777); !bytes.Equal(got, all[777:]) {
		t.Fatal("read from the middle of an append differs")
	}
	st, _ := s.Stat("a")
	if st.End != int64(len(all)) || st.Committed != st.End || st.Start != 0 || st.Sealed {
		t.Fatalf("stat %+v", st)
	}

	// Expected offsets: right, wrong (with the positions), and a retry.
	end := st.End
	res := must(t, lc, NewAppend("a", end, []byte("xyz")))
	if res.Offset != end {
		t.Fatalf("expected-offset append at %d, want %d", res.Offset, end)
	}
	retry := must(t, lc, NewAppend("a", end, []byte("xyz")))
	if retry.Offset != end {
		t.Fatalf("retried append answered %d, want %d", retry.Offset, end)
	}
	if st2, _ := s.Stat("a"); st2.End != end+3 {
		t.Fatalf("a retried append was stored twice: end %d", st2.End)
	}
	e := wantCode(t, do(t, lc, NewAppend("a", 5, []byte("q"))).Err, CodeWrongOffset)
	if e.End != end+3 || e.Offset != 5 {
		t.Fatalf("wrong offset error %+v", e)
	}
	wantCode(t, do(t, lc, NewAppend("a", NoOffset, make([]byte, 1<<16+1))).Err, CodeTooLarge)
	wantCode(t, do(t, lc, NewAppend("nope", NoOffset, []byte("x"))).Err, CodeNotFound)
	wantCode(t, do(t, lc, NewAppend("a", NoOffset, nil)).Err, CodeBadRequest)

	// Reads past the end, trim, reads below the start.
	_, err := s.Read(context.Background(), "a", end+4, 10, false)
	wantCode(t, err, CodeOutOfRange)
	if r := must(t, lc, Mutation{Op: OpTrim, Name: "a", Offset: 1000}); r.Offset != 1000 {
		t.Fatalf("trim result %d", r.Offset)
	}
	must(t, lc, Mutation{Op: OpTrim, Name: "a", Offset: 10}) // monotonic: no effect
	_, err = s.Read(context.Background(), "a", 999, 10, false)
	if e := wantCode(t, err, CodeTruncated); e.Start != 1000 {
		t.Fatalf("truncated error %+v", e)
	}
	if got := readAll(t, s, "a", 1000); !bytes.Equal(got, append(all[1000:], "xyz"...)) {
		t.Fatal("read after trim differs")
	}
	wantCode(t, do(t, lc, Mutation{Op: OpTrim, Name: "a", Offset: end + 100}).Err, CodeOutOfRange)

	// Seal fixes the length.
	if r := must(t, lc, Mutation{Op: OpSeal, Name: "a"}); r.Offset != end+3 {
		t.Fatalf("seal at %d, want %d", r.Offset, end+3)
	}
	wantCode(t, do(t, lc, NewAppend("a", NoOffset, []byte("late"))).Err, CodeSealed)
	if st, _ := s.Stat("a"); !st.Sealed || st.End != end+3 {
		t.Fatalf("stat after seal %+v", st)
	}
	must(t, lc, Mutation{Op: OpDelete, Name: "a"})
	_, err = s.Stat("a")
	wantCode(t, err, CodeNotFound)
	wantCode(t, do(t, lc, Mutation{Op: OpDelete, Name: "a"}).Err, CodeNotFound)
}

func TestLocalRestart(t *testing.T) {
	for _, every := range []int{1000000, 7} {
		t.Run(fmt.Sprintf("snapshotEvery=%d", every), func(t *testing.T) {
			mem := vfs.NewMem()
			snap := func(o *LocalOptions) { o.SnapshotEvery = every }
			lc := openLocal(t, mem, snap)
			want := map[string][]byte{}
			for _, n := range []string{"x", "y", "z"} {
				must(t, lc, Mutation{Op: OpCreate, Name: n})
			}
			for i := range 60 {
				n := []string{"x", "y", "z"}[i%3]
				p := bytes.Repeat([]byte{byte(i)}, 500+i*11)
				must(t, lc, NewAppend(n, NoOffset, p))
				want[n] = append(want[n], p...)
			}
			must(t, lc, Mutation{Op: OpTrim, Name: "y", Offset: 3000})
			must(t, lc, Mutation{Op: OpDelete, Name: "z"})
			must(t, lc, Mutation{Op: OpSeal, Name: "x"})
			if err := lc.Close(); err != nil {
				t.Fatal(err)
			}
			mem.Crash()
			lc = openLocal(t, mem, snap)
			defer lc.Close()
			s := lc.State()
			if got := readAll(t, s, "x", 0); !bytes.Equal(got, want["x"]) {
				t.Fatal("x differs after restart")
			}
			if got := readAll(t, s, "y", 3000); !bytes.Equal(got, want["y"][3000:]) {
				t.Fatal("y differs after restart")
			}
			if st, _ := s.Stat("x"); !st.Sealed {
				t.Fatal("x not sealed after restart")
			}
			if _, err := s.Stat("z"); err == nil {
				t.Fatal("z exists after restart")
			}
			// Appends go on at the right offsets.
			r := must(t, lc, NewAppend("y", NoOffset, []byte("more")))
			if r.Offset != int64(len(want["y"])) {
				t.Fatalf("append after restart at %d, want %d", r.Offset, len(want["y"]))
			}
		})
	}
}

func TestLongPollRead(t *testing.T) {
	lc := openLocal(t, vfs.NewMem())
	defer lc.Close()
	must(t, lc, Mutation{Op: OpCreate, Name: "t"})
	got := make(chan ReadResult, 1)
	go func() {
		r, _ := lc.State().Read(context.Background(), "t", 0, 100, true)
		got <- r
	}()
	must(t, lc, NewAppend("t", NoOffset, []byte("tail me")))
	r := <-got
	if string(r.Data) != "tail me" || r.Next != 7 {
		t.Fatalf("long poll got %q next %d", r.Data, r.Next)
	}
	// At the end of a sealed log, a waiting read returns at once.
	must(t, lc, Mutation{Op: OpSeal, Name: "t"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := lc.State().Read(ctx, "t", 7, 100, true)
	if err != nil || len(r.Data) != 0 || !r.Stat.Sealed || ctx.Err() != nil {
		t.Fatalf("read at the end of a sealed log: %v %+v", err, r)
	}
}

// TestIndexBytesPerAppend checks the compactness target: the index of a
// log takes at most one byte per KiB of its data (1 TiB per GiB), with
// small appends, interleaved with another log's, across many segments.
func TestIndexBytesPerAppend(t *testing.T) {
	lc := openLocal(t, vfs.NewMem(), func(o *LocalOptions) {
		o.State.DataLog.SegmentSize = 1 << 20
		o.State.IndexEvery = 1 << 18
	})
	defer lc.Close()
	must(t, lc, Mutation{Op: OpCreate, Name: "big"})
	must(t, lc, Mutation{Op: OpCreate, Name: "other"})
	p := bytes.Repeat([]byte{1}, 4096)
	const n = 4000 // 16 MiB in 1 MiB segments
	for range n {
		must(t, lc, NewAppend("big", NoOffset, p))
		must(t, lc, NewAppend("other", NoOffset, p[:100]))
	}
	ib := lc.State().IndexBytes("big")
	data := int64(n * len(p))
	t.Logf("index %d bytes for %d appends (%.2f B/append), %d bytes of data", ib, n, float64(ib)/n, data)
	if ib*1024 > data {
		t.Fatalf("index %d bytes for %d bytes of data: above 1 byte per KiB", ib, data)
	}
	// And it reads back through the sparse index.
	r, err := lc.State().Read(context.Background(), "big", int64(n/2*len(p)+5), 10000, false)
	if err != nil || len(r.Data) != 10000 {
		t.Fatalf("read: %v, %d bytes", err, len(r.Data))
	}
}
