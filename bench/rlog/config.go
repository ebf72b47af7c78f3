package rlog

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/corral-db/corral/config"
)

// Config is one run of the experiment.
type Config struct {
	// Sizes are the append sizes of the throughput sweep (Fig. 5.1), in
	// bytes.
	Sizes []int
	// Size is the append size of every other phase (the latency sweep,
	// the quorum and group-commit points, the read, the memory growth,
	// ZooKeeper's znodes) and of the disk anchor.
	Size int
	// Outstanding is the appends in flight (one writer goroutine each)
	// in the throughput sweep and the points; Latency the list the
	// latency sweep (Figs. 5.2, 5.3) runs over.
	Outstanding int
	Latency     []int
	// Members is the main ensemble's size; Quorums the ensemble sizes of
	// Fig. 5.4 (Members among them is measured in the main ensemble).
	Members int
	Quorums []int
	// Durability is the disk configuration's durability (sync unless
	// told otherwise); MemoryDurability the memory configuration's
	// (diskless or async), "" to skip it.
	Durability, MemoryDurability string
	// GroupCommit: also run a coupled ensemble of Members beside the
	// decoupled main one (rlog.groupCommit).
	GroupCommit bool
	// Warmup is unmeasured, Duration measured, per phase; PhaseBytes
	// ends a phase's measured interval early once that many bytes were
	// appended (bounds the disk a run fills).
	Warmup, Duration time.Duration
	PhaseBytes       int64
	// GrowBytes is the size the memory phase grows one log to, sampling
	// each member's resident memory GrowSamples times on the way; 0
	// skips it.
	GrowBytes   int64
	GrowSamples int
	// ZooKeeper: also launch a ZooKeeper ensemble of Members and write
	// Size-byte sequential znodes.
	ZooKeeper bool
	// Anchors: measure the disk and loopback anchors.
	Anchors bool
	// AnchorDuration bounds each anchor.
	AnchorDuration time.Duration
	// SnapCount is the members' snapCount (how many appends the driver's
	// in-memory log holds before a snapshot cuts it). The default is
	// corral's and ZooKeeper's: the in-memory log keeps an append's WAL
	// form, not its payload, and every snapshot writes every entry
	// znode, so a small snapCount mostly measures snapshot writes (at
	// 2000, late in a run, tens of MB of snapshot per 128 MiB of appends
	// on each member).
	SnapCount int
	// CorralBin is the corral binary; ZKLib, Java and JavaHeap start
	// ZooKeeper.
	CorralBin, ZKLib, Java, JavaHeap string
	// WorkDir is the parent of the run's temporary directory (the disk
	// anchor and every data directory go there); Keep keeps it.
	WorkDir string
	Keep    bool
	// StartTimeout bounds each ensemble's start, OpTimeout each append.
	StartTimeout, OpTimeout time.Duration
	CommandLine             string
	Log                     *slog.Logger
}

// Limits of the configuration.
const (
	MinSize        = 1
	MaxSize        = 8 << 20
	MaxOutstanding = 1024
	MaxMembers     = 9
	MaxPhase       = time.Hour
	MaxGrowSamples = 1000
	// ZooKeeperMaxData is ZooKeeper's default jute.maxbuffer (1 MiB - 1)
	// less room for a request's path and header: larger appends need the
	// property raised, which the launcher does not pass, so the
	// ZooKeeper phase is skipped with a warning.
	ZooKeeperMaxData = 1<<20 - 1 - 1024
)

// DefaultSizes is Fig. 5.1's append sizes, 1 KiB to 512 KiB.
var DefaultSizes = []int{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10}

// DefaultLatency is Figs. 5.2/5.3's appends in flight. 64 is past the
// thesis's range: by Little's law 16 appends in flight at a p50 of
// 20 ms move at most 52 MB/s of 64 KiB, so a point near the disk's
// ceiling needs more in flight or a lower latency; the sweep shows both.
var DefaultLatency = []int{1, 2, 4, 8, 16, 32, 64}

// DefaultConfig is a run sized for a small machine: every phase 1 s of
// warm-up and 4 s measured.
func DefaultConfig() Config {
	return Config{
		Sizes:            slices.Clone(DefaultSizes),
		Size:             64 << 10,
		Outstanding:      16,
		Latency:          slices.Clone(DefaultLatency),
		Members:          3,
		Quorums:          []int{1, 2, 3, 5},
		Durability:       "sync",
		MemoryDurability: "diskless",
		GroupCommit:      true,
		Warmup:           time.Second,
		Duration:         4 * time.Second,
		PhaseBytes:       256 << 20,
		GrowBytes:        256 << 20,
		GrowSamples:      8,
		ZooKeeper:        true,
		Anchors:          true,
		AnchorDuration:   2 * time.Second,
		SnapCount:        config.DefaultSnapCount,
		Java:             "java",
		StartTimeout:     60 * time.Second,
		OpTimeout:        30 * time.Second,
	}
}

// Fill checks c and fills its zero fields with the defaults.
func (c *Config) Fill() error {
	d := DefaultConfig()
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = d.StartTimeout
	}
	if c.OpTimeout <= 0 {
		c.OpTimeout = d.OpTimeout
	}
	c.Java = cmp.Or(c.Java, d.Java)
	c.SnapCount = cmp.Or(c.SnapCount, d.SnapCount)
	c.GrowSamples = cmp.Or(c.GrowSamples, d.GrowSamples)
	c.AnchorDuration = cmp.Or(c.AnchorDuration, d.AnchorDuration)
	if len(c.Sizes) == 0 {
		return errors.New("no append sizes")
	}
	for _, s := range append(slices.Clone(c.Sizes), c.Size) {
		if s < MinSize || s > MaxSize {
			return fmt.Errorf("append size %d: want [%d, %d] bytes", s, MinSize, MaxSize)
		}
	}
	if len(c.Latency) == 0 {
		return errors.New("no outstanding counts for the latency sweep")
	}
	for _, o := range append(slices.Clone(c.Latency), c.Outstanding) {
		if o < 1 || o > MaxOutstanding {
			return fmt.Errorf("outstanding appends %d: want [1, %d]", o, MaxOutstanding)
		}
	}
	for _, m := range append(slices.Clone(c.Quorums), c.Members) {
		if m < 1 || m > MaxMembers {
			return fmt.Errorf("ensemble size %d: want [1, %d]", m, MaxMembers)
		}
	}
	switch c.Durability {
	case "sync", "async":
	default:
		return fmt.Errorf("durability %q: want sync or async (the disk configuration; -memory-durability names the memory one)", c.Durability)
	}
	switch c.MemoryDurability {
	case "", "diskless", "async":
	default:
		return fmt.Errorf("memory durability %q: want diskless, async or empty (none)", c.MemoryDurability)
	}
	if c.MemoryDurability == c.Durability {
		return fmt.Errorf("memory durability %q is the disk configuration's: name another or none", c.MemoryDurability)
	}
	switch {
	case c.Duration <= 0 || c.Duration > MaxPhase || c.Warmup < 0 || c.Warmup > MaxPhase:
		return fmt.Errorf("duration must be in (0, %v] and warmup in [0, %v]", MaxPhase, MaxPhase)
	case c.AnchorDuration < 0 || c.AnchorDuration > MaxPhase:
		return fmt.Errorf("anchor duration must be in [0, %v]", MaxPhase)
	case c.PhaseBytes < 0:
		return errors.New("phase bytes must not be negative (0: no bound)")
	case c.GrowBytes < 0:
		return errors.New("grow bytes must not be negative (0: no memory phase)")
	case c.GrowSamples < 2 || c.GrowSamples > MaxGrowSamples:
		return fmt.Errorf("grow samples must be in [2, %d]", MaxGrowSamples)
	case c.SnapCount < 2:
		return errors.New("snap count must be at least 2")
	}
	return nil
}
