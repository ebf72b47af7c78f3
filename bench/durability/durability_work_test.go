package durability

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/internal/fakezk"
	"github.com/corral-db/corral/wire"
)

func durTestEnv(addrs ...string) durPhaseEnv {
	return durPhaseEnv{
		config: "fake", server: launch.TargetCorral, addrs: addrs,
		sessionTimeout: 30 * time.Second, drain: 10 * time.Second, log: slog.New(slog.DiscardHandler),
	}
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// The per-second series splits exactly what the phase counted, and the
// get phase reads only nodes the create phase made.
func TestDurCreateThenGet(t *testing.T) {
	f := fakezk.NewTree(t)
	env := durTestEnv(f.Addr(), f.Addr())
	ctx := context.Background()
	cr, ks := env.durCreate(ctx, 4, 16, 50*time.Millisecond, 1200*time.Millisecond)
	if cr.Err != "" {
		t.Fatal(cr.Err)
	}
	if cr.Ops == 0 || cr.Errors != 0 {
		t.Fatalf("create: %d ops, %d errors", cr.Ops, cr.Errors)
	}
	if len(cr.PerSecond) != 2 {
		t.Fatalf("1.2s measured: want 2 buckets, got %v", cr.PerSecond)
	}
	if got := sum(cr.PerSecond); got != cr.Ops {
		t.Errorf("per-second series sums to %d, phase counted %d", got, cr.Ops)
	}
	if cr.Series.Seconds != 1 || cr.Series.Mean != float64(cr.PerSecond[0]) {
		t.Errorf("series stats over the whole second only: %+v of %v", cr.Series, cr.PerSecond)
	}
	if cr.Latency.Count != cr.Ops {
		t.Errorf("latency count %d, ops %d", cr.Latency.Count, cr.Ops)
	}
	// Every create sent (warm-up included) made a node the get phase may read.
	if created := int64(f.Count(wire.OpCreate)) - 1; ks.Total() != created { // one is the root
		t.Errorf("key space holds %d nodes, %d creates were sent", ks.Total(), created)
	}
	gr := env.durGet(ctx, 3, ks, 0, 500*time.Millisecond)
	if gr.Err != "" {
		t.Fatal(gr.Err)
	}
	if gr.Ops == 0 || gr.Errors != 0 {
		t.Errorf("get: %d ops, %d errors (%s)", gr.Ops, gr.Errors, gr.FirstError)
	}
	if got := sum(gr.PerSecond); got != gr.Ops {
		t.Errorf("get series sums to %d, phase counted %d", got, gr.Ops)
	}
	f.Mu.Lock()
	closed, sessions := f.Closed, f.Sessions
	f.Mu.Unlock()
	if closed != int(sessions) {
		t.Errorf("%d sessions opened, %d closed", sessions, closed)
	}
}

// The queue recipe: every message is consumed at most once, each consumer
// takes messages in creation order, and what was produced is either
// consumed or left in the queue.
func TestDurQueueRecipe(t *testing.T) {
	for _, tc := range []struct{ producers, consumers int }{{1, 1}, {2, 3}} {
		f := fakezk.NewTree(t)
		env := durTestEnv(f.Addr())
		res := env.durQueue(context.Background(), durQueueConfig{
			producers: tc.producers, consumers: tc.consumers, valueSize: 20, maxBacklog: 50,
			warmup: 50 * time.Millisecond, duration: 700 * time.Millisecond,
		})
		if res.Err != "" {
			t.Fatal(res.Err)
		}
		if res.Ops == 0 || res.Produced == 0 {
			t.Fatalf("%d/%d: consumed %d, produced %d", tc.producers, tc.consumers, res.Ops, res.Produced)
		}
		if got := sum(res.PerSecond); got != res.Ops {
			t.Errorf("consumed series sums to %d, phase counted %d", got, res.Ops)
		}
		if got := sum(res.ProducedPerSecond); got != res.Produced {
			t.Errorf("produced series sums to %d, phase counted %d", got, res.Produced)
		}
		if res.EndToEnd == nil || res.EndToEnd.Count != res.Ops {
			t.Errorf("end-to-end latency of %+v messages, %d consumed", res.EndToEnd, res.Ops)
		}
		if res.Errors != 0 {
			t.Errorf("%d error replies, first %s", res.Errors, res.FirstError)
		}

		f.Mu.Lock()
		var deleted int64
		for sid, paths := range f.Deletes {
			deleted += int64(len(paths))
			for i := 1; i < len(paths); i++ {
				if paths[i] <= paths[i-1] {
					t.Errorf("session %d took %s after %s", sid, paths[i], paths[i-1])
				}
			}
		}
		var left int64
		for p := range f.Nodes {
			if strings.HasPrefix(p, durQueueRoot+"/") {
				left++
			}
		}
		created := int64(f.Seq[durQueueRoot])
		f.Mu.Unlock()
		if left != res.LeftInQueue {
			t.Errorf("report says %d left in the queue, the server holds %d", res.LeftInQueue, left)
		}
		if deleted+left != created {
			t.Errorf("%d created, %d deleted, %d left", created, deleted, left)
		}
		if left > 50+int64(tc.producers) {
			t.Errorf("%d left in the queue: the backlog bound of 50 was not kept", left)
		}
	}
}

// At a rate the fake easily serves, the CPU phase issues the paced creates
// and misses none; at least the measured interval's share of them arrives.
func TestDurCPUPhase(t *testing.T) {
	f := fakezk.NewTree(t)
	env := durTestEnv(f.Addr())
	res := env.durCPU(context.Background(), 4, 8, 200, 100*time.Millisecond, time.Second)
	if res.Err != "" {
		t.Fatal(res.Err)
	}
	if res.TargetRate != 200 {
		t.Errorf("target rate %v", res.TargetRate)
	}
	// The pacer issues at most rate × (warm-up + measured) creates.
	if sent := f.Count(wire.OpCreate) - 1; sent > 220 || sent == 0 {
		t.Errorf("%d creates sent at 200/s over 1.1s", sent)
	}
	if got := sum(res.PerSecond); got != res.Ops {
		t.Errorf("series sums to %d, phase counted %d", got, res.Ops)
	}
}

// A server that is gone fails the phase with what was measured so far,
// rather than hanging.
func TestDurPhaseNoServer(t *testing.T) {
	f := fakezk.NewTree(t)
	addr := f.Addr()
	f.Ln.Close()
	env := durTestEnv(addr)
	res, _ := env.durCreate(context.Background(), 2, 8, 0, 200*time.Millisecond)
	if res.Err == "" {
		t.Fatal("create against a closed port succeeded")
	}
	if res.Phase != DurPhaseCreate || res.Config != "fake" {
		t.Errorf("failed phase not labelled: %+v", res)
	}
}
