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
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv"
)

// putCounting is a KV server that counts Puts and MultiPuts, can hold
// the first Put until released, and can fail the next MultiPuts before
// or after running them.
type putCounting struct {
	kvpb.KVServer
	puts, multiPuts atomic.Int32
	multiLen        atomic.Int32 // puts of the last MultiPut

	mu      sync.Mutex
	holdPut chan struct{} // guarded by mu: the first Put waits for it
	before  []error       // guarded by mu: returned instead of running
	after   []error       // guarded by mu: returned after running
}

func (s *putCounting) Put(ctx context.Context, req *kvpb.PutRequest) (*kvpb.PutResponse, error) {
	if err := holdFirstCall(ctx, s.puts.Add(1), &s.mu, &s.holdPut); err != nil {
		return nil, err
	}
	return s.KVServer.Put(ctx, req)
}

func (s *putCounting) MultiPut(ctx context.Context, req *kvpb.MultiPutRequest) (*kvpb.MultiPutResponse, error) {
	s.multiPuts.Add(1)
	s.multiLen.Store(int32(len(req.GetPuts())))
	s.mu.Lock()
	var before, after error
	if len(s.before) > 0 {
		before, s.before = s.before[0], s.before[1:]
	}
	if len(s.after) > 0 {
		after, s.after = s.after[0], s.after[1:]
	}
	s.mu.Unlock()
	if before != nil {
		return nil, before
	}
	resp, err := s.KVServer.MultiPut(ctx, req)
	if after != nil {
		return nil, after
	}
	return resp, err
}

// arm zeroes the counts and arms the hold and the failures.
func (s *putCounting) arm(hold chan struct{}, before, after []error) {
	s.puts.Store(0)
	s.multiPuts.Store(0)
	s.mu.Lock()
	s.holdPut, s.before, s.after = hold, before, after
	s.mu.Unlock()
}

// putLeader serves a one-member group through a putCounting server and
// returns it, its store and a client; table t has family cf (one
// version) and family h (ten versions).
func putLeader(t *testing.T) (*putCounting, *kv.Store, *kvclient.Client) {
	t.Helper()
	return putLeaderTimeout(t, 0)
}

// putLeaderTimeout is putLeader with the client's RequestTimeout (0:
// the default).
func putLeaderTimeout(t *testing.T, timeout time.Duration) (*putCounting, *kv.Store, *kvclient.Client) {
	t.Helper()
	store := openStore(t)
	s := &putCounting{}
	addr := serveKV(t, func(addr string) kvpb.KVServer {
		s.KVServer = kv.NewService(store, kv.NewLocalGroup(store, addr))
		return s
	})
	c, err := kvclient.New(kvclient.Config{Endpoints: []string{addr}, Backoff: time.Millisecond, RequestTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}, {Name: "h", MaxVersions: 10}}}); err != nil {
		t.Fatal(err)
	}
	return s, store, c
}

func putReq(table string, i int) *kvpb.PutRequest {
	return &kvpb.PutRequest{Table: table, Row: fmt.Appendf(nil, "p%d", i), Cells: []*kvpb.Cell{
		{Family: "cf", Qualifier: []byte("a"), Value: fmt.Appendf(nil, "v%d", i)},
		{Family: "h", Qualifier: []byte("b"), Value: fmt.Appendf(nil, "w%d", i)},
	}}
}

// heldPuts sends put 0 (held by the server until release is closed) and,
// once the server has it, puts 1..n-1 of table[i] concurrently; it
// returns once those are queued, and wait returns each put's outcome.
func heldPuts(t *testing.T, s *putCounting, c *kvclient.Client, release chan struct{}, tables []string) (wait func() ([]*kvpb.PutResponse, []error)) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "no put line taken", func() bool { return kvclient.BusyPutLines(c) == 0 })
	n := len(tables)
	resps, errs := make([]*kvpb.PutResponse, n), make([]error, n)
	var wg sync.WaitGroup
	send := func(i int) {
		defer wg.Done()
		resps[i], errs[i] = c.Put(context.Background(), putReq(tables[i], i))
	}
	wg.Add(1)
	go send(0)
	testutil.Eventually(t, 10*time.Second, "the server holds the first Put", func() bool { return s.puts.Load() == 1 })
	for i := 1; i < n; i++ {
		wg.Add(1)
		go send(i)
	}
	testutil.Eventually(t, 10*time.Second, "Puts queued", func() bool { return kvclient.QueuedPuts(c) == n-1 })
	close(release)
	return func() ([]*kvpb.PutResponse, []error) {
		wg.Wait()
		return resps, errs
	}
}

// checkStored checks rows p<i> for the puts that succeeded: each holds
// its values, and its ten-version family exactly one version (applied
// once).
func checkStored(t *testing.T, store *kv.Store, ok []bool) {
	t.Helper()
	for i, good := range ok {
		cells, err := store.Get("t", fmt.Appendf(nil, "p%d", i), kv.ReadOptions{MaxVersions: 10})
		if !good {
			if err == nil {
				t.Errorf("p%d: stored %v, want nothing", i, cells)
			}
			continue
		}
		if err != nil || len(cells) != 2 || string(cells[0].Value) != fmt.Sprint("v", i) || string(cells[1].Value) != fmt.Sprint("w", i) {
			t.Errorf("p%d: %v %v, want cf:a=v%d and one version h:b=w%d", i, cells, err, i, i)
		}
	}
}

// TestConcurrentPutsCoalesce: Puts that arrive while a Put is in flight
// leave together as one MultiPut, each answered with its own version.
func TestConcurrentPutsCoalesce(t *testing.T) {
	s, store, c := putLeader(t)
	release := make(chan struct{})
	s.arm(release, nil, nil)
	tables := make([]string, 16)
	for i := range tables {
		tables[i] = "t"
	}
	resps, errs := heldPuts(t, s, c, release, tables)()
	seen := map[uint64]bool{}
	ok := make([]bool, len(tables))
	for i := range tables {
		if errs[i] != nil || resps[i].GetVersion() == 0 || seen[resps[i].GetVersion()] {
			t.Fatalf("put %d: %v %v (versions so far %v)", i, resps[i], errs[i], seen)
		}
		seen[resps[i].GetVersion()] = true
		ok[i] = true
	}
	if p, m, l := s.puts.Load(), s.multiPuts.Load(), s.multiLen.Load(); p != 1 || m != 1 || l != 15 {
		t.Fatalf("%d Puts and %d MultiPuts (the last of %d), want 1 and 1 of 15", p, m, l)
	}
	checkStored(t, store, ok)
}

// TestCoalescedPutOutcomes: a put that fails in a MultiPut gets its own
// error, as Put would have answered it; the others apply.
func TestCoalescedPutOutcomes(t *testing.T) {
	s, store, c := putLeader(t)
	release := make(chan struct{})
	s.arm(release, nil, nil)
	tables := []string{"t", "t", "nope", "t", "nope"}
	_, errs := heldPuts(t, s, c, release, tables)()
	ok := make([]bool, len(tables))
	for i, tb := range tables {
		if tb == "nope" {
			if status.Code(errs[i]) != codes.InvalidArgument {
				t.Fatalf("put %d to a missing table: %v, want InvalidArgument", i, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Fatalf("put %d: %v", i, errs[i])
		}
		ok[i] = true
	}
	if m := s.multiPuts.Load(); m != 1 {
		t.Fatalf("%d MultiPuts, want 1", m)
	}
	checkStored(t, store, ok)
}

// TestCoalescedPutsRetriedAlone: a MultiPut whose answer is lost after
// it applied is retried whole when the error is one a Put would retry
// (Unavailable), and otherwise has each of its puts sent again alone;
// either way with the same request ids, so each put applies once.
func TestCoalescedPutsRetriedAlone(t *testing.T) {
	for _, tc := range []struct {
		code            codes.Code
		puts, multiPuts int32
	}{
		{codes.Unavailable, 1, 2}, // the batch again
		{codes.Internal, 4, 1},    // the first, then 3 alone
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			s, store, c := putLeader(t)
			release := make(chan struct{})
			s.arm(release, nil, []error{status.Error(tc.code, "injected after applying")})
			_, errs := heldPuts(t, s, c, release, []string{"t", "t", "t", "t"})()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("put %d: %v", i, err)
				}
			}
			if p, m := s.puts.Load(), s.multiPuts.Load(); p != tc.puts || m != tc.multiPuts {
				t.Fatalf("%d Puts and %d MultiPuts, want %d and %d", p, m, tc.puts, tc.multiPuts)
			}
			checkStored(t, store, []bool{true, true, true, true})
		})
	}
}

// TestPutCoalescingOffWhenUnimplemented: a server without MultiPut has
// the batch's puts sent alone, and the client stops coalescing puts.
func TestPutCoalescingOffWhenUnimplemented(t *testing.T) {
	s, store, c := putLeader(t)
	release := make(chan struct{})
	s.arm(release, []error{status.Error(codes.Unimplemented, "no MultiPut here")}, nil)
	_, errs := heldPuts(t, s, c, release, []string{"t", "t", "t"})()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	checkStored(t, store, []bool{true, true, true})
	var wg sync.WaitGroup
	for i := 3; i < 19; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Put(context.Background(), putReq("t", i)); err != nil {
				t.Errorf("put %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if m := s.multiPuts.Load(); m != 1 {
		t.Fatalf("%d MultiPuts, want only the refused one", m)
	}
}

// TestQueuedPutCancelled: a put whose context ends while it is queued
// returns its context's error and is never sent.
func TestQueuedPutCancelled(t *testing.T) {
	s, store, c := putLeader(t)
	release := make(chan struct{})
	s.arm(release, nil, nil)
	testutil.Eventually(t, 10*time.Second, "no put line taken", func() bool { return kvclient.BusyPutLines(c) == 0 })
	first := make(chan error, 1)
	go func() {
		_, err := c.Put(context.Background(), putReq("t", 0))
		first <- err
	}()
	testutil.Eventually(t, 10*time.Second, "the server holds the first Put", func() bool { return s.puts.Load() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		_, err := c.Put(ctx, putReq("t", 1))
		queued <- err
	}()
	testutil.Eventually(t, 10*time.Second, "a Put queued", func() bool { return kvclient.QueuedPuts(c) == 1 })
	cancel()
	if err := <-queued; status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled queued put: %v, want Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the line freed", func() bool { return kvclient.BusyPutLines(c) == 0 })
	if m := s.multiPuts.Load(); m != 0 {
		t.Fatalf("%d MultiPuts sent for a put that left", m)
	}
	checkStored(t, store, []bool{true, false})
}

// TestQueuedPutSpendsOneTimeout: a Put without a deadline of its own
// gets RequestTimeout from its call on, its wait in the line included:
// queued behind a put the server holds (with a long deadline of its
// own), it fails DeadlineExceeded while that put is still held, never
// sent. Before, its deadline started only when its MultiPut was sent,
// and again when it was then sent alone: one Put could take three
// RequestTimeouts.
func TestQueuedPutSpendsOneTimeout(t *testing.T) {
	s, _, c := putLeaderTimeout(t, 200*time.Millisecond)
	testutil.Eventually(t, 10*time.Second, "no put line taken", func() bool { return kvclient.BusyPutLines(c) == 0 })
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	s.arm(release, nil, nil)
	held := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := c.Put(ctx, putReq("t", 0))
		held <- err
	}()
	testutil.Eventually(t, 10*time.Second, "the server holds the first Put", func() bool { return s.puts.Load() == 1 })
	queued := make(chan error, 1)
	go func() {
		_, err := c.Put(context.Background(), putReq("t", 1))
		queued <- err
	}()
	err := returned(t, "the queued Put returned while the first was held", queued)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("queued Put: %v, want DeadlineExceeded", err)
	}
	if m := s.multiPuts.Load(); m != 0 {
		t.Fatalf("%d MultiPuts sent, want none", m)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("held Put: %v", err)
	}
}
