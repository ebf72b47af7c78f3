package rlogclient_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	rlogv1 "github.com/corral-db/corral/api/rlog/v1"
	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/rlog/rlogclient"
	"github.com/corral-db/corral/rlog/rlogsvc"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// brokenAppends answers every append with a bare Unavailable, as the
// transport does when the server dies after the request reached it.
type brokenAppends struct {
	rlogv1.UnimplementedLogsServer
	calls atomic.Int32
}

func (b *brokenAppends) Append(context.Context, *rlogv1.AppendRequest) (*rlogv1.AppendResponse, error) {
	b.calls.Add(1)
	return nil, status.Error(codes.Unavailable, "error reading from server: EOF")
}

// countingAppends takes every append at offset 7.
type countingAppends struct {
	rlogv1.UnimplementedLogsServer
	calls atomic.Int32
}

func (c *countingAppends) Append(context.Context, *rlogv1.AppendRequest) (*rlogv1.AppendResponse, error) {
	c.calls.Add(1)
	return &rlogv1.AppendResponse{Offset: 7}, nil
}

func serveLogs(t *testing.T, s rlogv1.LogsServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rlogv1.RegisterLogsServer(srv, s)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// TestAppendNotRepeatedAfterUnknownOutcome: an append without an expected
// offset whose server fails with a transport Unavailable is not sent to
// another server (a second copy could commit), the next call starts at
// the next server, and an append with an expected offset does move on.
func TestAppendNotRepeatedAfterUnknownOutcome(t *testing.T) {
	broken, good := &brokenAppends{}, &countingAppends{}
	c, err := rlogclient.Dial([]string{serveLogs(t, broken), serveLogs(t, good)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Append(ctx, "l", []byte("x"), nil); !errors.Is(err, rlogclient.ErrOutcomeUnknown) {
		t.Fatalf("append through a failing server: %v, want ErrOutcomeUnknown", err)
	}
	if broken.calls.Load() != 1 || good.calls.Load() != 0 {
		t.Fatalf("append sent %d times to the failing server and %d to the other; want 1 and 0",
			broken.calls.Load(), good.calls.Load())
	}
	if off, err := c.Append(ctx, "l", []byte("x"), nil); err != nil || off != 7 || good.calls.Load() != 1 {
		t.Fatalf("next append: %d %v (%d calls), want offset 7 from the other server", off, err, good.calls.Load())
	}

	c2, err := rlogclient.Dial([]string{serveLogs(t, broken), serveLogs(t, good)})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	expect := int64(7)
	if off, err := c2.Append(ctx, "l", []byte("x"), &expect); err != nil || off != 7 {
		t.Fatalf("append with an expected offset: %d %v, want 7 from the other server", off, err)
	}
}
