package rlogclient_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/rlog/rlogclient"
	"github.com/corral-db/corral/rlog/rlogsvc"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"google.golang.org/grpc"
)

// follower answers every write with rlog.ErrNotLeader, as a member that
// does not lead; its reads see an empty state.
type follower struct{ s *rlog.State }

func (f follower) Do(context.Context, rlog.Mutation) (rlog.Result, error) {
	return rlog.Result{}, rlog.ErrNotLeader
}
func (f follower) State() *rlog.State { return f.s }

func serve(t *testing.T, p rlog.Proposer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rlogsvc.New(p).Register(srv)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func TestClientAgainstLocal(t *testing.T) {
	lc, err := rlog.OpenLocal(rlog.LocalOptions{
		State: rlog.Options{FS: vfs.NewMem(), Dir: "l", MaxAppend: 4096,
			DataLog: datalog.Options{SegmentSize: 1 << 16, PrepareInline: true}},
		WAL: wal.Options{SegmentSize: 1 << 16, PrepareInline: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	fs, err := rlog.Open(rlog.Options{FS: vfs.NewMem(), Dir: "f", DataLog: datalog.Options{SegmentSize: 1 << 16, PrepareInline: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	// The follower first: writes must move on to the leader.
	c, err := rlogclient.Dial([]string{serve(t, follower{fs}), serve(t, lc)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if _, err := c.Create(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "c"); !errors.Is(err, rlog.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	off, err := c.Append(ctx, "c", []byte("hello "), nil)
	if err != nil || off != 0 {
		t.Fatalf("append: %d %v", off, err)
	}
	six := int64(6)
	if off, err := c.Append(ctx, "c", []byte("world"), &six); err != nil || off != 6 {
		t.Fatalf("expected-offset append: %d %v", off, err)
	}
	_, err = c.Append(ctx, "c", []byte("x"), &six)
	var e *rlog.Error
	if !errors.As(err, &e) || e.Code != rlog.CodeWrongOffset || e.End != 11 {
		t.Fatalf("wrong offset: %v (%+v)", err, e)
	}
	if _, err := c.Append(ctx, "c", make([]byte, 5000), nil); !errors.Is(err, rlog.ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	data, next, st, err := c.Read(ctx, "c", 0, 100, 0)
	if err != nil || string(data) != "hello world" || next != 11 || st.Committed != 11 {
		t.Fatalf("read: %q %d %+v %v", data, next, st, err)
	}

	// Follow sees what commits after it starts, and ends at a seal.
	got := make(chan []byte, 1)
	go func() {
		var all []byte
		c.Follow(ctx, "c", 0, func(b []byte) error { all = append(all, b...); return nil })
		got <- all
	}()
	if _, err := c.Append(ctx, "c", []byte("!"), nil); err != nil {
		t.Fatal(err)
	}
	if end, err := c.Seal(ctx, "c"); err != nil || end != 12 {
		t.Fatalf("seal: %d %v", end, err)
	}
	if all := <-got; !bytes.Equal(all, []byte("hello world!")) {
		t.Fatalf("follow got %q", all)
	}
	if _, err := c.Append(ctx, "c", []byte("late"), nil); !errors.Is(err, rlog.ErrSealed) {
		t.Fatalf("append to sealed: %v", err)
	}
	if start, err := c.Trim(ctx, "c", 6); err != nil || start != 6 {
		t.Fatalf("trim: %d %v", start, err)
	}
	if _, _, _, err := c.Read(ctx, "c", 0, 10, 0); !errors.As(err, &e) || e.Code != rlog.CodeTruncated || e.Start != 6 {
		t.Fatalf("read below start: %v", err)
	}
	if st, err := c.Stat(ctx, "c"); err != nil || st != (rlogclient.Stat{Name: "c", Start: 6, End: 12, Committed: 12, Sealed: true}) {
		t.Fatalf("stat: %+v %v", st, err)
	}
	if err := c.Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, "c"); !errors.Is(err, rlog.ErrNotFound) {
		t.Fatalf("stat after delete: %v", err)
	}
}
