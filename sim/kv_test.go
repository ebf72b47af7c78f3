package sim

import (
	"flag"
	"fmt"
	"testing"
)

// TestKVScripted runs the key-value store through a leader crash and a
// partition on three servers, then checks every server against the
// committed history.
func TestKVScripted(t *testing.T) {
	for _, mode := range []Mode{ModeSync, ModeAsync, ModeDiskless} {
		t.Run(mode.String(), func(t *testing.T) {
			opts := Options{Seed: 7, Voters: 3, Mode: mode, Compact: true, SnapCount: 8, Machines: NewKVMachines(7)}
			c := NewCluster(opts)
			defer c.Close()
			l := stable(t, c, 3000)
			for i := range 40 {
				if _, err := c.Propose(opts.Machines.Payload(i)); err != nil {
					t.Fatalf("propose %d: %v", i, err)
				}
				c.RunFor(5)
			}
			c.Crash(l)
			c.RunFor(500)
			l2 := stable(t, c, 3000)
			for i := 40; i < 80; i++ {
				if _, err := c.Propose(opts.Machines.Payload(i)); err == nil {
					c.RunFor(5)
				}
			}
			c.Partition(map[uint64]int{l2: 1})
			c.RunFor(800)
			c.Settle()
			for _, id := range c.ids {
				if err := c.servers[id].sm.ext.Check(true); err != nil {
					t.Fatalf("server %d: %v", id, err)
				}
			}
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			if n := len(c.Committed()); n < 60 {
				t.Fatalf("%d entries committed, want at least 60", n)
			}
		})
	}
}

var flagSM = flag.String("sm", "", "state machine of TestSeeds: the hash chain (default) or kv (the key-value store on pebble)")

// machinesFor returns the -sm state machines of a seed's run.
func machinesFor(t *testing.T, seed uint64) Machines {
	switch *flagSM {
	case "":
		return nil
	case "kv":
		return NewKVMachines(seed)
	}
	t.Fatalf("-sm=%q: want kv or nothing", *flagSM)
	return nil
}

// TestKVSeedsCover runs a few random seeds of the kv variant and checks
// that the workload reached what the checks are about: repeated and
// stale request ids, conditions that held and that failed, and the
// faults: crashes, partitions, random transfers and those of the
// compaction-aware leader change (kvgate.go), one of them handed over.
func TestKVSeedsCover(t *testing.T) {
	var repeats, stale, held, failed, crashes, partitions, transfers, gate, handovers int
	for seed := uint64(1); seed <= 4; seed++ {
		opts := RandomOptions(seed)
		ms := NewKVMachines(seed)
		opts.Machines = ms
		st, err := Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		m := ms.(*kvMachines).model
		repeats += m.repeats
		stale += m.stale
		held += m.condHeld
		failed += m.condFailed
		crashes += st.Crashes
		partitions += st.Partitions
		transfers += st.Transfers - st.GateTransfers
		gate += st.GateTransfers
		handovers += st.Handovers
	}
	got := fmt.Sprintf("repeats=%d stale=%d conditions held=%d failed=%d crashes=%d partitions=%d transfers=%d (leader change %d, handovers %d)",
		repeats, stale, held, failed, crashes, partitions, transfers, gate, handovers)
	t.Log(got)
	if repeats == 0 || stale == 0 || held == 0 || failed == 0 || crashes == 0 || partitions == 0 || transfers == 0 || gate == 0 || handovers == 0 {
		t.Fatalf("workload missed a case: %s", got)
	}
}
