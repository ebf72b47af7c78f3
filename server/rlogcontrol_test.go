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

// TestLogsConcurrentAppends: writers on different members, several on
// each (so one API server pipelines appends to one log while the others
// move its record under it), append to one log through the API without
// expected offsets; the control record's version serializes them, so
// every append gets its own offset and reads back there with its bytes
// (above the inline size: each member's data log), on every member.
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
	const perMember, each, size = 4, 6, 2 << 10
	writers := len(logs) * perMember
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
				res, err := logs[w%len(logs)].Do(ctx, rlog.NewAppend("c", rlog.NoOffset, p))
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
		if err != nil || st.End != int64(writers*each*size) {
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

// TestLogsRememberedRecord: an API server appends against the control
// record it remembers (one round trip) and must never act on a stale one:
// after another server appended, an expected offset is checked against
// the log as it is (success at the true end, WrongOffset with the true
// positions), and after the log was deleted and created again up to the
// remembered version with another end, the append lands at the new end.
func TestLogsRememberedRecord(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.RlogRoot = "/logs" })
	e.waitLeader()
	ctx := ctxT(t)
	var logs [2]*zklogs.Logs
	for i := range logs {
		l, err := zklogs.New(zklogs.Options{Servers: []string{e.servers[i].addr}, Root: "/logs"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		logs[i] = l
	}
	a, b := logs[0], logs[1]
	do := func(l *zklogs.Logs, m rlog.Mutation) rlog.Result {
		t.Helper()
		res, err := l.Do(ctx, m)
		if err != nil {
			t.Fatalf("%v %s: %v", m.Op, m.Name, err)
		}
		return res
	}
	const n = 2 << 10
	data := func(c byte, size int) []byte { return bytes.Repeat([]byte{c}, size) }
	if res := do(a, rlog.Mutation{Op: rlog.OpCreate, Name: "r"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	for i := range 3 {
		if res := do(a, rlog.NewAppend("r", rlog.NoOffset, data('a', n))); res.Err != nil || res.Offset != int64(i*n) {
			t.Fatalf("append %d: %+v", i, res)
		}
	}
	// a remembers end 3n; b moves it to 4n.
	if res := do(b, rlog.NewAppend("r", rlog.NoOffset, data('b', n))); res.Err != nil || res.Offset != 3*n {
		t.Fatalf("b's append: %+v", res)
	}
	if res := do(a, rlog.NewAppend("r", 4*n, data('c', n))); res.Err != nil || res.Offset != 4*n {
		t.Fatalf("append at the true end (a remembers another): %+v", res)
	}
	// a remembers end 5n; b moves it to 6n; a's expected 5n is wrong.
	if res := do(b, rlog.NewAppend("r", rlog.NoOffset, data('d', n))); res.Err != nil || res.Offset != 5*n {
		t.Fatalf("b's append: %+v", res)
	}
	res := do(a, rlog.NewAppend("r", 5*n, data('e', n)))
	var we *rlog.Error
	if !errors.As(res.Err, &we) || we.Code != rlog.CodeWrongOffset || we.End != 6*n {
		t.Fatalf("append at a stale expected offset: %+v, want WrongOffset with end %d", res, 6*n)
	}

	// a remembers end 6n at the record's version 6 (create, then six
	// appends). b deletes the log and creates it again with six
	// appends of another size: the same version, another end.
	if res := do(b, rlog.Mutation{Op: rlog.OpDelete, Name: "r"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if res := do(b, rlog.Mutation{Op: rlog.OpCreate, Name: "r"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	for range 6 {
		if res := do(b, rlog.NewAppend("r", rlog.NoOffset, data('f', n+1))); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	res = do(a, rlog.NewAppend("r", rlog.NoOffset, data('g', n)))
	if res.Err != nil || res.Offset != 6*(n+1) {
		t.Fatalf("append after the log was created again: %+v, want offset %d", res, 6*(n+1))
	}
	e.waitConverged()
	for i, l := range logs {
		r, err := l.Read(ctx, "r", 0, 7*n+6, false)
		want := append(bytes.Repeat([]byte{'f'}, 6*(n+1)), data('g', n)...)
		if err != nil || !bytes.Equal(r.Data, want) {
			t.Fatalf("server %d: read: %v, %d bytes, equal %v", i, err, len(r.Data), bytes.Equal(r.Data, want))
		}
	}
}
