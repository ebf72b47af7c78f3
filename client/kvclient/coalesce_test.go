package kvclient_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv"
)

// counting is a KV server that counts the Gets and MultiGets it is sent,
// can hold the first Get or every MultiGet until released, and can fail
// MultiGets with an injected error.
type counting struct {
	kvpb.KVServer
	gets, multiGets atomic.Int32
	multiRows       atomic.Int32 // rows of the last MultiGet

	mu        sync.Mutex
	holdGet   chan struct{} // guarded by mu: the first Get waits for it
	holdMulti chan struct{} // guarded by mu: MultiGets wait for it
	multiErrs []error       // guarded by mu: errors of the next MultiGets
}

func (s *counting) Get(ctx context.Context, req *kvpb.GetRequest) (*kvpb.GetResponse, error) {
	if err := holdFirstCall(ctx, s.gets.Add(1), &s.mu, &s.holdGet); err != nil {
		return nil, err
	}
	return s.KVServer.Get(ctx, req)
}

// holdFirstCall holds the first call (n == 1) until *hold, read under mu, is
// closed, if it is set.
func holdFirstCall(ctx context.Context, n int32, mu *sync.Mutex, hold *chan struct{}) error {
	mu.Lock()
	h := *hold
	mu.Unlock()
	if n != 1 || h == nil {
		return nil
	}
	select {
	case <-h:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *counting) MultiGet(ctx context.Context, req *kvpb.MultiGetRequest) (*kvpb.MultiGetResponse, error) {
	s.multiGets.Add(1)
	s.multiRows.Store(int32(len(req.GetRows())))
	s.mu.Lock()
	hold := s.holdMulti
	var err error
	if len(s.multiErrs) > 0 {
		err, s.multiErrs = s.multiErrs[0], s.multiErrs[1:]
	}
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	return s.KVServer.MultiGet(ctx, req)
}

// reset zeroes the counts and arms the holds (nil: none).
func (s *counting) reset(holdGet, holdMulti chan struct{}, multiErrs ...error) {
	s.gets.Store(0)
	s.multiGets.Store(0)
	s.mu.Lock()
	s.holdGet, s.holdMulti, s.multiErrs = holdGet, holdMulti, multiErrs
	s.mu.Unlock()
}

// serveKV serves the KV service svc(addr) on a loopback port.
func serveKV(t *testing.T, svc func(addr string) kvpb.KVServer) string {
	t.Helper()
	srv, err := apisrv.Listen("127.0.0.1:0", apisrv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kvpb.RegisterKVServer(srv.Registrar(), svc(srv.Addr().String()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Addr().String()
}

// countingLeader serves a one-member group through a counting server
// and returns a client of it; the table t holds rows r0..r9, each with
// cell cf:a = "v<i>".
func countingLeader(t *testing.T, cfg kvclient.Config) (*counting, *kvclient.Client) {
	t.Helper()
	store := openStore(t)
	s := &counting{}
	addr := serveKV(t, func(addr string) kvpb.KVServer {
		s.KVServer = kv.NewService(store, kv.NewLocalGroup(store, addr))
		return s
	})
	cfg.Endpoints = []string{addr}
	c, err := kvclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fill(t, c)
	return s, c
}

func fill(t *testing.T, c *kvclient.Client) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: fmt.Appendf(nil, "r%d", i),
			Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("a"), Value: fmt.Appendf(nil, "v%d", i)}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkGet checks a Get of row r<i>: its value if i < 10, else NotFound.
func checkGet(i int, resp *kvpb.GetResponse, err error) error {
	if i >= 10 {
		if !kvclient.IsNotFound(err) {
			return fmt.Errorf("r%d: %v %v, want NotFound", i, resp, err)
		}
		return nil
	}
	if err != nil || len(resp.GetCells()) != 1 || string(resp.Cells[0].Value) != fmt.Sprintf("v%d", i) {
		return fmt.Errorf("r%d: %v %v", i, resp, err)
	}
	return nil
}

func get(ctx context.Context, c *kvclient.Client, i int) (*kvpb.GetResponse, error) {
	return c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: fmt.Appendf(nil, "r%d", i)})
}

// holdFirst sends a Get of r0 that the server holds (s armed with
// holdGet), and returns once the server has it; wait returns its error.
func holdFirst(t *testing.T, s *counting, c *kvclient.Client) (wait func() error) {
	t.Helper()
	// A coalesced call of an earlier test frees its line only after
	// answering its Gets: a Get sent before then would queue behind it
	// and leave in a MultiGet.
	testutil.Eventually(t, 10*time.Second, "no coalescing line taken", func() bool { return kvclient.BusyLines(c) == 0 })
	errc := make(chan error, 1)
	go func() {
		resp, err := get(context.Background(), c, 0)
		errc <- checkGet(0, resp, err)
	}()
	testutil.Eventually(t, 10*time.Second, "the server holds the first Get", func() bool { return s.gets.Load() == 1 })
	return func() error { return <-errc }
}

// getsFrom sends Gets of rows from..to-1 concurrently; wait returns the
// first wrong result.
func getsFrom(c *kvclient.Client, from, to int) (wait func() error) {
	errs := make(chan error, to-from)
	for i := from; i < to; i++ {
		go func() {
			resp, err := get(context.Background(), c, i)
			errs <- checkGet(i, resp, err)
		}()
	}
	return func() error {
		var first error
		for range to - from {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
}

// TestLoneGetIsOneCall: an idle client sends a Get at once as one Get
// call, and Gets one after another are not coalesced.
func TestLoneGetIsOneCall(t *testing.T) {
	s, c := countingLeader(t, kvclient.Config{})
	s.reset(nil, nil)
	for i := range 3 {
		resp, err := get(context.Background(), c, i)
		if err := checkGet(i, resp, err); err != nil {
			t.Fatal(err)
		}
		if g, m := s.gets.Load(), s.multiGets.Load(); g != int32(i+1) || m != 0 {
			t.Fatalf("after %d Gets: %d Get calls, %d MultiGet calls", i+1, g, m)
		}
	}
	resp, err := get(context.Background(), c, 42)
	if err := checkGet(42, resp, err); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentGetsCoalesce: Gets that arrive while a Get is in flight
// leave together as one MultiGet, each answered with its own row, a
// missing row with NotFound.
func TestConcurrentGetsCoalesce(t *testing.T) {
	s, c := countingLeader(t, kvclient.Config{})
	release := make(chan struct{})
	s.reset(release, nil)
	first := holdFirst(t, s, c)
	const n = 20 // rows r1..r20: r10 and above are missing
	rest := getsFrom(c, 1, n+1)
	testutil.Eventually(t, 10*time.Second, "Gets queued", func() bool { return kvclient.QueuedGets(c) == n })
	close(release)
	if err := first(); err != nil {
		t.Fatal(err)
	}
	if err := rest(); err != nil {
		t.Fatal(err)
	}
	if g, m := s.gets.Load(), s.multiGets.Load(); g != 1 || m != 1 || s.multiRows.Load() != n {
		t.Fatalf("%d Gets: %d Get calls, %d MultiGet calls (last of %d rows), want 1 and 1 of %d",
			n+1, g, m, s.multiRows.Load(), n)
	}
	if q := kvclient.QueuedGets(c); q != 0 {
		t.Fatalf("%d Gets still queued", q)
	}
}

// TestCoalesceQueueBound: Gets beyond the queue's bound are sent alone.
func TestCoalesceQueueBound(t *testing.T) {
	s, c := countingLeader(t, kvclient.Config{})
	release := make(chan struct{})
	s.reset(release, nil)
	first := holdFirst(t, s, c)
	const extra = 10
	n := kvclient.MaxCoalesce + extra
	rest := getsFrom(c, 1, n+1)
	testutil.Eventually(t, 10*time.Second, "the queue full and the rest sent alone", func() bool {
		return kvclient.QueuedGets(c) == kvclient.MaxCoalesce && s.gets.Load() == 1+extra
	})
	close(release)
	if err := first(); err != nil {
		t.Fatal(err)
	}
	if err := rest(); err != nil {
		t.Fatal(err)
	}
	if m, r := s.multiGets.Load(), s.multiRows.Load(); m != 1 || r != kvclient.MaxCoalesce {
		t.Fatalf("%d MultiGet calls (last of %d rows), want 1 of %d", m, r, kvclient.MaxCoalesce)
	}
}

// TestCoalesceOff: with NoCoalesce every Get is its own call.
func TestCoalesceOff(t *testing.T) {
	s, c := countingLeader(t, kvclient.Config{NoCoalesce: true})
	release := make(chan struct{})
	s.reset(release, nil)
	first := holdFirst(t, s, c)
	rest := getsFrom(c, 1, 11)
	if err := rest(); err != nil { // answered while the first is held
		t.Fatal(err)
	}
	close(release)
	if err := first(); err != nil {
		t.Fatal(err)
	}
	if g, m := s.gets.Load(), s.multiGets.Load(); g != 11 || m != 0 {
		t.Fatalf("11 Gets: %d Get calls, %d MultiGet calls", g, m)
	}
}

// TestCoalescedWaiterCancelled: a waiter whose context ends leaves with
// its context's error, queued or in flight, and the others are answered.
func TestCoalescedWaiterCancelled(t *testing.T) {
	s, c := countingLeader(t, kvclient.Config{})
	for _, inFlight := range []bool{false, true} {
		t.Run(fmt.Sprintf("inFlight=%v", inFlight), func(t *testing.T) {
			releaseGet, releaseMulti := make(chan struct{}), make(chan struct{})
			s.reset(releaseGet, releaseMulti)
			first := holdFirst(t, s, c)
			ctx, cancel := context.WithCancel(context.Background())
			cancelled := make(chan error, 1)
			go func() {
				_, err := get(ctx, c, 5)
				cancelled <- err
			}()
			rest := getsFrom(c, 1, 4)
			testutil.Eventually(t, 10*time.Second, "Gets queued", func() bool { return kvclient.QueuedGets(c) == 4 })
			if inFlight {
				close(releaseGet)
				testutil.Eventually(t, 10*time.Second, "the MultiGet sent", func() bool { return s.multiGets.Load() == 1 })
			}
			cancel()
			if err := <-cancelled; status.Code(err) != codes.Canceled {
				t.Fatalf("cancelled Get: %v, want Canceled", err)
			}
			if !inFlight {
				close(releaseGet)
			}
			close(releaseMulti)
			if err := first(); err != nil {
				t.Fatal(err)
			}
			if err := rest(); err != nil {
				t.Fatal(err)
			}
			want := int32(4)
			if !inFlight {
				want = 3 // the cancelled waiter left before the call
			}
			if m, r := s.multiGets.Load(), s.multiRows.Load(); m != 1 || r != want {
				t.Fatalf("%d MultiGet calls (last of %d rows), want 1 of %d", m, r, want)
			}
		})
	}
}

// TestCoalescedBatchErrors: a batch failing with an error that is not
// retriable fails its Gets only (the Get in flight before it, and later
// Gets, succeed); one failing with UNAVAILABLE is retried.
func TestCoalescedBatchErrors(t *testing.T) {
	s, c := countingLeader(t, kvclient.Config{Backoff: time.Millisecond})
	for _, tc := range []struct {
		err   error
		fails bool
	}{
		{status.Error(codes.Internal, "injected"), true},
		{status.Error(codes.Unavailable, "injected"), false},
	} {
		t.Run(status.Code(tc.err).String(), func(t *testing.T) {
			release := make(chan struct{})
			s.reset(release, nil, tc.err)
			first := holdFirst(t, s, c)
			errs := make(chan error, 3)
			for i := 1; i <= 3; i++ {
				go func() {
					_, err := get(context.Background(), c, i)
					errs <- err
				}()
			}
			testutil.Eventually(t, 10*time.Second, "Gets queued", func() bool { return kvclient.QueuedGets(c) == 3 })
			close(release)
			if err := first(); err != nil {
				t.Fatalf("the Get before the batch: %v", err)
			}
			for range 3 {
				err := <-errs
				if tc.fails && status.Code(err) != status.Code(tc.err) {
					t.Fatalf("batched Get: %v, want %v", err, tc.err)
				}
				if !tc.fails && err != nil {
					t.Fatalf("batched Get: %v, want it retried", err)
				}
			}
			resp, err := get(context.Background(), c, 7)
			if err := checkGet(7, resp, err); err != nil {
				t.Fatalf("a Get after the batch: %v", err)
			}
		})
	}
}

// TestCoalescedBatchRedirected: a batch sent to a member that answers
// NotLeader follows the redirect to the leader, as a Get does.
func TestCoalescedBatchRedirected(t *testing.T) {
	store := openStore(t)
	leader := &counting{}
	leaderAddr := serveKV(t, func(addr string) kvpb.KVServer {
		leader.KVServer = kv.NewService(store, kv.NewLocalGroup(store, addr))
		return leader
	})
	// front answers Gets from the leader's service (as a member that
	// still leads for them would) and MultiGets with NotLeader.
	front := &counting{}
	frontAddr := serveKV(t, func(string) kvpb.KVServer {
		front.KVServer = leader.KVServer
		return front
	})
	st, err := status.New(codes.Unavailable, "not the leader").WithDetails(&kvpb.NotLeader{LeaderId: 1, LeaderAddress: leaderAddr, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := kvclient.New(kvclient.Config{Endpoints: []string{frontAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fill(t, c)

	release := make(chan struct{})
	front.reset(release, nil, st.Err())
	leader.reset(nil, nil)
	first := holdFirst(t, front, c)
	rest := getsFrom(c, 1, 16)
	testutil.Eventually(t, 10*time.Second, "Gets queued", func() bool { return kvclient.QueuedGets(c) == 15 })
	close(release)
	if err := first(); err != nil {
		t.Fatal(err)
	}
	if err := rest(); err != nil {
		t.Fatal(err)
	}
	if fm, lm, lr := front.multiGets.Load(), leader.multiGets.Load(), leader.multiRows.Load(); fm != 1 || lm != 1 || lr != 15 {
		t.Fatalf("MultiGet calls: %d to the front, %d to the leader (last of %d rows), want 1, 1 of 15", fm, lm, lr)
	}
}

// TestQueuedGetSpendsOneTimeout: a Get without a deadline of its own gets
// RequestTimeout from its call on, its wait in the line included (as
// TestQueuedPutSpendsOneTimeout for puts).
func TestQueuedGetSpendsOneTimeout(t *testing.T) {
	s, c := countingLeader(t, kvclient.Config{RequestTimeout: 200 * time.Millisecond})
	testutil.Eventually(t, 10*time.Second, "no coalescing line taken", func() bool { return kvclient.BusyLines(c) == 0 })
	release := make(chan struct{})
	s.reset(release, nil)
	held := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := get(ctx, c, 0)
		held <- checkGet(0, resp, err)
	}()
	testutil.Eventually(t, 10*time.Second, "the server holds the first Get", func() bool { return s.gets.Load() == 1 })
	queued := make(chan error, 1)
	go func() {
		_, err := get(context.Background(), c, 1)
		queued <- err
	}()
	err := returned(t, "the queued Get returned while the first was held", queued)
	close(release)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("queued Get: %v, want DeadlineExceeded", err)
	}
	if m := s.multiGets.Load(); m != 0 {
		t.Fatalf("%d MultiGets sent, want none", m)
	}
	if err := <-held; err != nil {
		t.Fatalf("held Get: %v", err)
	}
}

// returned waits (testutil.Eventually's bound) for the call that reports
// on ch and returns its error.
func returned(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	var err error
	testutil.Eventually(t, 10*time.Second, what, func() bool {
		select {
		case err = <-ch:
			return true
		default:
			return false
		}
	})
	return err
}
