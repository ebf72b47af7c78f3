package server

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/zklogs"
	"github.com/corral-db/corral/wire"
)

// TestLogsDiskless: with durability=diskless the logs under rlog.root
// keep every entry inline in the tree (no data log anywhere), the API's
// operations and the control records' rules work as in the other modes,
// and a stop and start of every member (diskless's checkpoints) loses no
// acknowledged append.
func TestLogsDiskless(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.Durability, o.RlogRoot = DurabilityDiskless, "/logs" })
	e.waitLeader()
	ctx := ctxT(t)
	logsOn := func(i int) *zklogs.Logs {
		l, err := zklogs.New(zklogs.Options{Servers: []string{e.servers[i].addr}, Root: "/logs"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	do := func(l *zklogs.Logs, m rlog.Mutation) rlog.Result {
		t.Helper()
		res, err := l.Do(ctx, m)
		if err != nil {
			t.Fatalf("%v: %v", m.Op, err)
		}
		return res
	}
	l := logsOn(1)
	if res := do(l, rlog.Mutation{Op: rlog.OpCreate, Name: "d"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	var want []byte
	for i := range 8 {
		p := bytes.Repeat([]byte{byte('a' + i)}, 16<<10)
		res := do(l, rlog.NewAppend("d", int64(len(want)), p))
		if res.Err != nil || res.Offset != int64(len(want)) {
			t.Fatalf("append %d: offset %d, %v", i, res.Offset, res.Err)
		}
		want = append(want, p...)
	}
	if res := do(l, rlog.NewAppend("d", 5, []byte("x"))); !errors.Is(res.Err, rlog.ErrWrongOffset) {
		t.Fatalf("append at a wrong offset: %v", res.Err)
	}
	if res := do(l, rlog.Mutation{Op: rlog.OpTrim, Name: "d", Offset: 20 << 10}); res.Err != nil || res.Offset != 20<<10 {
		t.Fatalf("trim: %d, %v", res.Offset, res.Err)
	}
	c := e.connect(0)
	if _, err := c.Create(ctx, "/logs/d/e-", []byte("x"), client.WorldACL(client.PermAll), client.ModePersistentSequential); !errors.Is(err, wire.CodeBadArguments) {
		t.Fatalf("a plain create under a log with offsets: %v", err)
	}
	for i := range e.servers {
		e.servers[i].stop(t)
	}
	for i := range e.servers {
		if _, err := os.Stat(filepath.Join(e.opts[i].DataDir, "version-2", "rlog")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("server %d has a data log in diskless mode: %v", i, err)
		}
	}
	for i := range e.servers {
		e.restart(i)
	}
	e.waitLeader()
	e.waitConverged()
	for i := range e.servers {
		l := logsOn(i)
		st, err := l.Stat(ctx, "d")
		if err != nil || st.Start != 20<<10 || st.End != int64(len(want)) {
			t.Fatalf("server %d: stat %+v, %v", i, st, err)
		}
		var got []byte
		for off := st.Start; off < st.End; {
			r, err := l.Read(ctx, "d", off, 1<<20, false)
			if err != nil {
				t.Fatalf("server %d: read at %d: %v", i, off, err)
			}
			got, off = append(got, r.Data...), r.Next
		}
		if !bytes.Equal(got, want[20<<10:]) {
			t.Fatalf("server %d: read %d bytes, not the %d appended after the start", i, len(got), len(want)-20<<10)
		}
	}
}

// TestLogsConcurrentAppends: writers on different members append to one
// log through the API without expected offsets; the control record's
// version serializes them, so every append gets its own offset and reads
// back there with its bytes (above the inline size: each member's data
// log), on every member.
func TestLogsConcurrentAppends(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.RlogRoot = "/logs" })
	e.waitLeader()
	ctx := ctxT(t)
	logs := make([]*zklogs.Logs, 3)
	for i := range logs {
		l, err := zklogs.New(zklogs.Options{Servers: []string{e.servers[i].addr}, Root: "/logs"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		logs[i] = l
	}
	if res, err := logs[0].Do(ctx, rlog.Mutation{Op: rlog.OpCreate, Name: "c"}); err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	const writers, each, size = 3, 12, 2 << 10
	type put struct {
		off  int64
		data []byte
	}
	got := make(chan put, writers*each)
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range each {
				p := bytes.Repeat([]byte{byte(w*each + i)}, size)
				res, err := logs[w].Do(ctx, rlog.NewAppend("c", rlog.NoOffset, p))
				if err == nil {
					err = res.Err
				}
				if err != nil {
					errs <- err
					return
				}
				got <- put{res.Offset, p}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(got)
	seen := map[int64]bool{}
	var puts []put
	for p := range got {
		if p.off%size != 0 || seen[p.off] {
			t.Fatalf("offset %d given twice or not on an append's boundary", p.off)
		}
		seen[p.off] = true
		puts = append(puts, p)
	}
	e.waitConverged()
	for i, l := range logs {
		st, err := l.Stat(ctx, "c")
		if err != nil || st.End != writers*each*size {
			t.Fatalf("server %d: stat %+v, %v", i, st, err)
		}
		for _, p := range puts {
			r, err := l.Read(ctx, "c", p.off, size, false)
			if err != nil || !bytes.Equal(r.Data, p.data) {
				t.Fatalf("server %d: read at %d: %v (equal %v)", i, p.off, err, bytes.Equal(r.Data, p.data))
			}
		}
	}
}
