package sim

import (
	"flag"
	"testing"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/replica/snapstream"
)

var flagBiteSeeds = flag.Int("bite-seeds", 0, "TestSimulatorBites: seeds to try per break (0: each break's bound)")

// TestSimulatorBites breaks one rule at a time and requires the simulator
// to catch it within a bounded number of seeds: a simulator that passes a
// broken driver proves nothing. Each rule of the driver is caught twice:
// by the check of the rule itself, and (OutcomesOnly) by what the break
// does to the outcome: a committed write lost, replicas diverging, or a
// register history that is not linearizable. The log cut is a rule of
// efficiency (a SNAP where a DIFF would do), not of safety, so only its
// own check catches it. The last case breaks the workload, not the
// driver: leaders answer reads without confirming their leadership, which
// only the linearizability check can see. A learner whose join step
// never runs out (transfer progress reported forever) shows as a
// liveness failure: a join whose message was lost never ends; so does one
// whose transfer progress is ignored: a SNAP longer than InitLimit
// (Options.SnapTransfer) never completes. The bounds are a few times the
// seeds each needed when written; -v logs the seed that caught it.
func TestSimulatorBites(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     Mode
		brk      replica.Breaks
		stale    bool
		outcomes bool
		bound    int
	}{
		{"persisted before ACK", ModeSync, replica.Breaks{AckBeforeDurable: true}, false, false, 20},
		{"persisted before ACK/outcomes", ModeSync, replica.Breaks{AckBeforeDurable: true}, false, true, 200},
		{"recovering flag", ModeDiskless, replica.Breaks{IgnoreRecovering: true}, false, false, 20},
		{"recovering flag/outcomes", ModeDiskless, replica.Breaks{IgnoreRecovering: true}, false, true, 200},
		{"diskless log cut", ModeDiskless, replica.Breaks{CutAtNewest: true}, false, false, 20},
		{"join progress never expires", ModeSync, replica.Breaks{ProgressForever: true}, false, true, 200},
		{"SNAP transfer progress ignored", ModeSync, replica.Breaks{IgnoreProgress: true}, false, true, 200},
		{"reads without leadership confirmation", ModeSync, replica.Breaks{}, true, true, 200},
		{"slim log entries sent as they are", ModeSync, replica.Breaks{SendSlim: true}, false, true, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireCaught(t, tc.bound, "the driver broken ("+tc.name+")", func(seed uint64) Options {
				o := RandomOptions(seed)
				o.Mode = tc.mode
				o.Breaks = tc.brk
				o.StaleReads = tc.stale
				o.OutcomesOnly = tc.outcomes
				o.Slim = o.Slim || tc.brk.SendSlim
				return o
			})
		})
	}
}

// TestKVSimulatorBites breaks one rule of the key-value store at a time
// and requires the kv runs (kv.go, kvgate.go) to catch it within a
// bounded number of seeds in every mode.
func TestKVSimulatorBites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		brk   kv.Breaks
		bound int
	}{
		{"applied zxid in the data's batch", kv.Breaks{AppliedLags: true}, 20},
	} {
		for _, mode := range []Mode{ModeSync, ModeDiskless} {
			t.Run(tc.name+"/"+mode.String(), func(t *testing.T) {
				requireCaught(t, tc.bound, "the store broken ("+tc.name+")", func(seed uint64) Options {
					o := RandomOptions(seed)
					o.Mode = mode
					ms := NewKVMachines(seed)
					ms.(*kvMachines).breaks = tc.brk
					o.Machines = ms
					return o
				})
			})
		}
	}
}

// streamedOptions are seed's options with every SNAP streamed in small,
// slow pieces and snapshots taken, so that streams span link breaks.
func streamedOptions(seed uint64) Options {
	o := RandomOptions(seed)
	o.StreamPiece, o.StreamRate, o.StreamEvery = 4, 1, 5
	o.Compact = true
	return o
}

// TestStreamSimulatorBites breaks the learner's rule of a streamed SNAP
// (install only a stream that arrived whole, in order) and requires the
// simulator to catch it, with the hash chain and with the key-value
// store as the state machine.
func TestStreamSimulatorBites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kv    bool
		bound int
	}{
		{"pieces stored across a gap", false, 60},
		{"pieces stored across a gap/kv", true, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireCaught(t, tc.bound, "the learner broken ("+tc.name+")", func(seed uint64) Options {
				o := streamedOptions(seed)
				o.StreamBreaks = snapstream.Breaks{IgnoreGaps: true}
				if tc.kv {
					o.Machines = NewKVMachines(seed)
				}
				return o
			})
		})
	}
}

// TestStreamsCover: with the rules kept, runs of streamed SNAPs install
// streams that arrived whole and refuse some that did not (a link broke
// in the middle), and pass.
func TestStreamsCover(t *testing.T) {
	var total Stats
	for seed := uint64(1); seed <= 40; seed++ {
		st, err := Run(streamedOptions(seed))
		if err != nil {
			t.Fatal(err)
		}
		total.add(st)
	}
	t.Logf("streamed SNAPs installed %d, refused %d, pieces %d", total.StreamedSnaps, total.RefusedStreams, total.StreamPieces)
	if total.StreamedSnaps == 0 || total.RefusedStreams == 0 {
		t.Fatalf("streams installed %d, refused %d: a case was not reached", total.StreamedSnaps, total.RefusedStreams)
	}
}

// requireCaught runs the options of seeds 1, 2, ... (bound of them, or
// -bite-seeds) until one fails, and fails the test if none does: a
// simulator that passes a broken rule proves nothing.
func requireCaught(t *testing.T, bound int, broken string, opts func(seed uint64) Options) {
	t.Helper()
	n := bound
	if *flagBiteSeeds > 0 {
		n = *flagBiteSeeds
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		if _, err := Run(opts(seed)); err != nil {
			t.Logf("caught at seed %d: %v", seed, err.(*Failure).Err)
			return
		}
	}
	t.Fatalf("%d seeds ran with %s and none failed", n, broken)
}
