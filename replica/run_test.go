package replica

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// syncedLog is a fakeLog safe for Run's log goroutine.
type syncedLog struct {
	mu sync.Mutex
	fakeLog
}

func (l *syncedLog) Append(ents []zab.Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fakeLog.Append(ents)
}

func (l *syncedLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fakeLog.Sync()
}

func (l *syncedLog) TruncateAfter(z zab.Zxid) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fakeLog.TruncateAfter(z)
}

// TestRunOverATransport runs a three-member group as a program would:
// Run per member over a transport (here the in-memory one), proposals
// from another goroutine.
func TestRunOverATransport(t *testing.T) {
	nw := transport.NewNetwork(transport.NetworkConfig{Codec: true})
	defer nw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := []uint64{1, 2, 3}
	ds := map[uint64]*Driver{}
	sms := map[uint64]*listSM{}
	var wg sync.WaitGroup
	for _, id := range ids {
		ep, err := nw.Join(id)
		if err != nil {
			t.Fatal(err)
		}
		sms[id] = &listSM{}
		d, err := New(Config{
			ID: id, Voters: ids, Mode: Sync, SM: sms[id],
			Env: Env{Log: &syncedLog{}, HardState: &fakeHS{}, Send: ep.Send},
		})
		if err != nil {
			t.Fatal(err)
		}
		ds[id] = d
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Run(ctx, ep.Recv(), 5*time.Millisecond); err != nil {
				t.Error(err)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	var last zab.Zxid
	for i := range 50 {
		// A proposal goes to whichever member leads; until one does,
		// every member answers ErrNotLeader.
		testutil.Eventually(t, 20*time.Second, "a leader takes proposal "+strconv.Itoa(i), func() bool {
			for _, id := range ids {
				z, err := ds[id].Propose([]byte{byte(i)})
				if err == nil {
					last = z
					return true
				}
				if !errors.Is(err, zab.ErrNotLeader) {
					t.Fatal(err)
				}
			}
			return false
		})
	}
	for _, id := range ids {
		testutil.Eventually(t, 20*time.Second, "member "+strconv.FormatUint(id, 10)+" applies the last proposal", func() bool {
			return sms[id].Applied() >= last
		})
	}
	want := sms[1].zxids()
	for _, id := range ids[1:] {
		if got := sms[id].zxids(); !slices.Equal(got, want) {
			t.Fatalf("member %d applied %v, member 1 %v", id, got, want)
		}
	}
}

// TestRunCheckpointsOnAnyStop: a diskless member whose owner's context
// ends with a cause of its own (signal.NotifyContext's, say) stops in
// order: Run returns nil and writes the shutdown checkpoint.
func TestRunCheckpointsOnAnyStop(t *testing.T) {
	nw := transport.NewNetwork(transport.NetworkConfig{Codec: true})
	defer nw.Close()
	ep, err := nw.Join(1)
	if err != nil {
		t.Fatal(err)
	}
	sm := &listSM{}
	ckpt := &fakeCkpt{sm: sm}
	d, err := New(Config{
		ID: 1, Voters: []uint64{1}, Mode: Diskless, SM: sm,
		Env: Env{HardState: &fakeHS{}, Checkpoints: ckpt, Send: ep.Send},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, ep.Recv(), 5*time.Millisecond) }()
	cancel(errors.New("interrupt"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil for an orderly stop", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	if ckpt.n != 1 || !ckpt.complete {
		t.Fatalf("checkpoints written: %d (complete %v), want 1", ckpt.n, ckpt.complete)
	}
}
