package command

import (
	"slices"
	"testing"

	"github.com/corral-db/corral/bench/durability"
)

func TestDurabilityCLIRejectsBadTreeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"durability", "--figs", "5.7"},
		{"durability", "--figs", ""},
		{"durability", "--figs", "5.2,5.3"}, // 5.2 reads what 5.1 creates
		{"durability", "--snap-counts", "10"},
		{"durability", "--snap-counts", "3M"},
		{"durability", "--snap-counts", "100k,abc"},
		{"durability", "--restore-counts", "-5"},
		{"durability", "--restore-counts", "9223372036854775807k"},
		{"durability", "--restore-counts", "100k", "--servers", "1"},
		{"durability", "--restore-trials", "0"},
		{"durability", "--restore-trials", "99"},
	} {
		if code, _, errs := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errs)
		}
	}
}

func TestParseTreeFlags(t *testing.T) {
	cfg := durability.DefaultConfig()
	if err := cfg.ParseTreeFlags("5.3,5.4", "1M, 100k,100000", "250k"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.SnapCounts, []int64{100000, 1000000}) || !slices.Equal(cfg.RestoreCounts, []int64{250000}) {
		t.Errorf("sizes %v and %v", cfg.SnapCounts, cfg.RestoreCounts)
	}
	if cfg.TimePhases() {
		t.Errorf("figures 5.3 and 5.4 only, yet time-series phases: %+v", cfg)
	}

	cfg = durability.DefaultConfig()
	if err := cfg.ParseTreeFlags("5.1,5.2,5.3", "20k", "20k"); err != nil {
		t.Fatal(err)
	}
	if cfg.CreateDuration == 0 || cfg.GetDuration == 0 || cfg.CPUDuration != 0 || cfg.QueueDuration != 0 {
		t.Errorf("durations after --figs 5.1,5.2,5.3: %+v", cfg)
	}
	if !slices.Equal(cfg.SnapCounts, []int64{20000}) || len(cfg.RestoreCounts) != 0 {
		t.Errorf("sizes after --figs 5.1,5.2,5.3: %v, %v", cfg.SnapCounts, cfg.RestoreCounts)
	}

	cfg = durability.DefaultConfig()
	if err := cfg.ParseTreeFlags(durability.DurFigsAll, "", "none"); err != nil {
		t.Fatal(err)
	}
	if len(cfg.SnapCounts)+len(cfg.RestoreCounts) != 0 || !cfg.TimePhases() {
		t.Errorf("empty sizes: %v, %v", cfg.SnapCounts, cfg.RestoreCounts)
	}
}

func TestDurabilityConfigTreeCounts(t *testing.T) {
	cfg := durability.DefaultConfig()
	if !slices.Equal(cfg.SnapCounts, durability.DefaultDurTreeCounts()) || !slices.Equal(cfg.RestoreCounts, durability.DefaultDurTreeCounts()) {
		t.Errorf("defaults %v, %v", cfg.SnapCounts, cfg.RestoreCounts)
	}
	cfg.SnapCounts = []int64{500000, 100000, 500000}
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.SnapCounts, []int64{100000, 500000}) {
		t.Errorf("not sorted and unique: %v", cfg.SnapCounts)
	}
	cfg.Servers = 1
	if err := cfg.Fill(); err == nil {
		t.Error("a leader kill on a single server accepted")
	}
	cfg.RestoreCounts = nil
	if err := cfg.Fill(); err != nil {
		t.Errorf("snapshots on a single server: %v", err)
	}
	cfg.SnapCounts = []int64{durability.MaxDurTreeZnodes + 1}
	if err := cfg.Fill(); err == nil {
		t.Error("a size above the bound accepted")
	}
}
