package sim

import (
	"flag"
	"runtime"
	"sync"
	"testing"
	"time"
)

var (
	flagSeeds   = flag.Int("seeds", 300, "number of random seeds TestSeeds runs")
	flagFirst   = flag.Uint64("first", 1, "first seed of TestSeeds")
	flagSeed    = flag.Uint64("seed", 0, "run only this seed (TestSeeds)")
	flagMode    = flag.String("mode", "", "force every seed's durability mode: sync, async or diskless (default: the seed picks)")
	flagWorkers = flag.Int("workers", 0, "seeds TestSeeds runs at once (0: GOMAXPROCS)")
)

// TestSeeds runs randomized fault schedules, one per seed, and fails on
// the first invariant violation with the seed, options and last events.
// Seeds run in parallel on -workers goroutines; each seed is independent
// and deterministic, and the failure reported is the lowest failing seed,
// whatever the interleaving.
// The long run (acceptance), one per mode:
//
//	go test ./sim/ -run 'TestSeeds$' -seeds=100000 -mode=sync -timeout=6h
func TestSeeds(t *testing.T) {
	seeds := []uint64{}
	if *flagSeed != 0 {
		seeds = append(seeds, *flagSeed)
	} else {
		n := *flagSeeds
		if testing.Short() {
			n = min(n, 50)
		}
		for i := range n {
			seeds = append(seeds, *flagFirst+uint64(i))
		}
	}
	mode, ok := parseMode(*flagMode)
	if !ok {
		t.Fatalf("-mode=%q: want sync, async or diskless", *flagMode)
	}
	workers := *flagWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(seeds))
	start := time.Now()
	var (
		mu      sync.Mutex
		total   Stats
		next    int
		failed  = -1 // index in seeds of the lowest failing seed
		failErr error
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := i >= len(seeds) || (failed >= 0 && i > failed)
				mu.Unlock()
				if stop {
					return
				}
				opts := RandomOptions(seeds[i])
				if mode != nil {
					opts.Mode = *mode
				}
				opts.Machines = machinesFor(t, seeds[i])
				st, err := Run(opts)
				mu.Lock()
				if err != nil && (failed < 0 || i < failed) {
					failed, failErr = i, err
				}
				total.add(st)
				mu.Unlock()
				if *flagSeed != 0 {
					t.Logf("%v\nstats: %+v", opts, st)
				}
			}
		}()
	}
	wg.Wait()
	if failErr != nil {
		t.Fatal(failErr)
	}
	el := time.Since(start)
	t.Logf("%d seeds in %v (%.1f seeds/s, %d workers): committed=%d proposed=%d crashes=%d partitions=%d transfers=%d (handovers %d; kv leader change %d in %d runs) reconfigs=%d leaders=%d delivered=%d dropped=%d syncs(diff/trunc/snap)=%v snaps(longer than initLimit %d, stalled %d) streamed snaps(installed %d, refused %d, pieces %d) register ops=%d (unknown %d, unchecked histories %d)",
		len(seeds), el.Round(time.Millisecond), float64(len(seeds))/el.Seconds(), workers,
		total.Committed, total.Proposed, total.Crashes, total.Partitions, total.Transfers, total.Handovers, total.GateTransfers, total.GateRuns, total.Reconfigs,
		total.Leaders, total.Delivered, total.Dropped, total.Syncs[1:], total.LongSnaps, total.StalledSnaps, total.StreamedSnaps, total.RefusedStreams, total.StreamPieces, total.RegOps, total.RegUnknown, total.LinUnchecked)
}

func parseMode(s string) (*Mode, bool) {
	var m Mode
	switch s {
	case "":
		return nil, true
	case "sync":
		m = ModeSync
	case "async":
		m = ModeAsync
	case "diskless":
		m = ModeDiskless
	default:
		return nil, false
	}
	return &m, true
}
