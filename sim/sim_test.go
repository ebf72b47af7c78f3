package sim

import (
	"flag"
	"testing"
	"time"
)

var (
	flagSeeds = flag.Int("seeds", 300, "number of random seeds TestSeeds runs")
	flagFirst = flag.Uint64("first", 1, "first seed of TestSeeds")
	flagSeed  = flag.Uint64("seed", 0, "run only this seed (TestSeeds)")
	flagMode  = flag.String("mode", "", "force every seed's durability mode: sync, async or diskless (default: the seed picks)")
)

// TestSeeds runs randomized fault schedules, one per seed, and fails on
// the first invariant violation with the seed, options and last events.
// The long run (acceptance): go test ./sim/ -run 'TestSeeds$' -seeds=10000 -timeout=3h
// and, for diskless mode in every seed, the same with -mode=diskless.
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
	start := time.Now()
	var total Stats
	for _, seed := range seeds {
		opts := RandomOptions(seed)
		switch *flagMode {
		case "sync":
			opts.Mode = ModeSync
		case "diskless":
			opts.Mode = ModeDiskless
		case "async":
			opts.Mode = ModeAsync
		case "":
		default:
			t.Fatalf("-mode=%q: want sync, async or diskless", *flagMode)
		}
		opts.Machines = machinesFor(t, seed)
		st, err := Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		if *flagSeed != 0 {
			t.Logf("%v\nstats: %+v", opts, st)
		}
		total.Committed += st.Committed
		total.Proposed += st.Proposed
		total.Crashes += st.Crashes
		total.Partitions += st.Partitions
		total.Leaders += st.Leaders
		total.Delivered += st.Delivered
		total.Dropped += st.Dropped
		for i := range st.Syncs {
			total.Syncs[i] += st.Syncs[i]
		}
	}
	t.Logf("%d seeds in %v: committed=%d proposed=%d crashes=%d partitions=%d leaders=%d delivered=%d dropped=%d syncs(diff/trunc/snap)=%v",
		len(seeds), time.Since(start).Round(time.Millisecond), total.Committed, total.Proposed, total.Crashes,
		total.Partitions, total.Leaders, total.Delivered, total.Dropped, total.Syncs[1:])
}
