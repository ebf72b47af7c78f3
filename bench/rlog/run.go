package rlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/corral-db/corral/bench/launch"
)

// Group-commit values of rlog.groupCommit.
const (
	Decoupled = "decoupled"
	Coupled   = "coupled"
)

// setups are the ensembles a run launches, in order: the main one
// (Members, Durability, decoupled), the coupled one, the memory
// configuration, then each other quorum size.
func setups(cfg *Config) []setup {
	main := setup{Name: fmt.Sprintf("n%d-%s", cfg.Members, cfg.Durability), Members: cfg.Members, Durability: cfg.Durability, GroupCommit: Decoupled}
	out := []setup{main}
	if cfg.GroupCommit {
		out = append(out, setup{Name: main.Name + "-coupled", Members: cfg.Members, Durability: cfg.Durability, GroupCommit: Coupled})
	}
	if cfg.MemoryDurability != "" {
		out = append(out, setup{Name: fmt.Sprintf("n%d-%s", cfg.Members, cfg.MemoryDurability), Members: cfg.Members, Durability: cfg.MemoryDurability, GroupCommit: Decoupled})
	}
	for _, q := range cfg.Quorums {
		if q != cfg.Members {
			out = append(out, setup{Name: fmt.Sprintf("n%d-%s", q, cfg.Durability), Members: q, Durability: cfg.Durability, GroupCommit: Decoupled})
		}
	}
	return out
}

// Run measures the anchors, then launches each setup in turn and runs
// its phases, then ZooKeeper. The report holds what completed even when
// an error ends the run early.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Fill(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	rep := &Report{Config: cfg.summary(), Started: time.Now().UTC()}
	dir, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-rlog-", cfg.Keep, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer cleanup()
	if cfg.GrowBytes > 0 {
		// Before anything runs: the memory phase comes after the
		// sweeps, minutes in.
		if err := checkGrowSpace(dir, cfg.Members, cfg.GrowBytes); err != nil {
			return rep, err
		}
	}
	if cfg.CorralBin == "" {
		if cfg.CorralBin, err = launch.BuildCorral(ctx, dir); err != nil {
			return rep, err
		}
	}
	if cfg.Anchors {
		if err := measureAnchors(ctx, &cfg, dir, rep); err != nil {
			return rep, err
		}
	}
	for i, s := range setups(&cfg) {
		sdir := filepath.Join(dir, strconv.Itoa(i)+"-"+s.Name)
		err := runSetup(ctx, &cfg, s, i == 0, sdir, rep)
		if !cfg.Keep {
			os.RemoveAll(sdir) // the next setup gets the disk back
		}
		if err != nil {
			return rep, err
		}
	}
	if cfg.ZooKeeper {
		if cfg.Size > ZooKeeperMaxData {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("ZooKeeper skipped: %d-byte znodes need jute.maxbuffer raised", cfg.Size))
		} else {
			if cfg.ZKLib == "" {
				if cfg.ZKLib, err = launch.ZookeeperLib(ctx); err != nil {
					return rep, err
				}
			}
			cfg.Log.Info("phase", "system", "zookeeper", "members", cfg.Members, "size", cfg.Size)
			p, version, err := zookeeperPhase(ctx, &cfg, filepath.Join(dir, "zookeeper"))
			rep.ZooKeeperVersion = version
			if err != nil {
				return rep, err
			}
			rep.add(p)
		}
	}
	rep.Finished = time.Now().UTC()
	return rep, nil
}

// measureAnchors measures the disk and loopback anchors in dir.
func measureAnchors(ctx context.Context, cfg *Config, dir string, rep *Report) error {
	ad := anchorDir(dir)
	if err := os.MkdirAll(ad, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(ad)
	cfg.Log.Info("anchor", "what", "disk write+fdatasync", "block", cfg.Size)
	disk, blocks, err := DiskBandwidth(ctx, ad, cfg.Size, cfg.AnchorDuration)
	if err != nil {
		return err
	}
	var bySize []DiskAnchor
	for _, size := range anchorSizes(cfg) {
		d := DiskAnchor{Block: size, MBps: disk, Blocks: blocks}
		if size != cfg.Size {
			cfg.Log.Info("anchor", "what", "disk write+fdatasync", "block", size)
			if d.MBps, d.Blocks, err = DiskBandwidth(ctx, ad, size, cfg.AnchorDuration); err != nil {
				return err
			}
		}
		bySize = append(bySize, d)
	}
	cfg.Log.Info("anchor", "what", "loopback TCP", "chunk", cfg.Size)
	lo, err := LoopbackBandwidth(ctx, cfg.Size, cfg.AnchorDuration)
	if err != nil {
		return err
	}
	rep.Anchors = &Anchors{DiskMBps: disk, DiskBlocks: blocks, BlockSize: cfg.Size, LoopbackMBps: lo, BySize: bySize,
		Members: cfg.Members, CeilingMBps: Ceiling(disk, cfg.Members)}
	return nil
}

// anchorSizes are the sweep's sizes and Size, each once, ascending.
func anchorSizes(cfg *Config) []int {
	out := append(slices.Clone(cfg.Sizes), cfg.Size)
	slices.Sort(out)
	return slices.Compact(out)
}

// runSetup launches s and runs its phases: on the main setup the point,
// the size sweep, the latency sweep, the read (of the point's log) and
// the growth; on the coupled and quorum setups the point; on the memory
// setup the latency sweep.
func runSetup(ctx context.Context, cfg *Config, s setup, main bool, dir string, rep *Report) error {
	cfg.Log.Info("launching", "setup", s.Name, "members", s.Members, "durability", s.Durability, "groupCommit", s.GroupCommit)
	c, err := launchCluster(ctx, cfg, s, dir)
	if err != nil {
		return err
	}
	defer c.stop()
	rep.Setups = append(rep.Setups, SetupInfo{Name: s.Name, Members: s.Members, Durability: s.Durability, GroupCommit: s.GroupCommit, ZooCfg: c.config})
	n := 0
	run := func(fig string, size, outstanding int) (Point, error) {
		n++
		name := fmt.Sprintf("b%d-%s-%d-%d", n, fig, size, outstanding)
		cfg.Log.Info("phase", "setup", s.Name, "figure", fig, "size", size, "outstanding", outstanding)
		p, err := c.appendPhase(ctx, cfg, sanitize(name), size, outstanding)
		p.Figure = fig
		if err != nil {
			return p, err
		}
		rep.add(p)
		return p, nil
	}
	disk := s.Durability == cfg.Durability
	var pointLog string
	if disk {
		// Fig. 5.4's point: the quorum size and the group commit. On the
		// main setup too it comes first, so that every setup's point is
		// measured on a fresh ensemble (the sweeps leave tens of
		// thousands of entries behind, which every snapshot and
		// collection then walks) and decoupled compares with coupled on
		// equal terms.
		pointLog = sanitize(fmt.Sprintf("b%d-5.4-%d-%d", n+1, cfg.Size, cfg.Outstanding))
		if _, err := run("5.4", cfg.Size, cfg.Outstanding); err != nil {
			return err
		}
	}
	if main {
		for _, size := range cfg.Sizes {
			if _, err := run("5.1", size, cfg.Outstanding); err != nil {
				return err
			}
		}
	}
	if main || s.Durability == cfg.MemoryDurability && !disk {
		for _, o := range cfg.Latency {
			if _, err := run("5.2", cfg.Size, o); err != nil {
				return err
			}
		}
	}
	if main {
		name := pointLog
		cfg.Log.Info("phase", "setup", s.Name, "figure", "read", "log", name)
		p, err := c.readPhase(ctx, cfg, name, readChunk)
		p.Figure = "read"
		if err != nil {
			return err
		}
		rep.add(p)
		if cfg.GrowBytes > 0 {
			cfg.Log.Info("phase", "setup", s.Name, "figure", "memory", "target", cfg.GrowBytes)
			g, err := c.growPhase(ctx, cfg, "grow")
			if g != nil {
				rep.Growth = g
			}
			if err != nil && g == nil {
				return err
			}
			if err != nil {
				// The report shows the failed appends and the first
				// error; the other setups still run.
				cfg.Log.Warn("the memory phase failed", "err", err)
			}
		}
	}
	return nil
}

// readChunk is the read phase's bytes per read.
const readChunk = 1 << 20

// sanitize makes name a log name (a znode name's alphabet, no dots).
func sanitize(name string) string {
	b := []byte(name)
	for i, ch := range b {
		if ch == '.' {
			b[i] = '_'
		}
	}
	return string(b)
}
