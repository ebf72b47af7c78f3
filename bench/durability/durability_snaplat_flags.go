package durability

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The thesis's figures that `corral bench durability --figs` selects.
const (
	DurFigCreate   = "5.1"
	DurFigGet      = "5.2"
	DurFigSnapshot = "5.3"
	DurFigRestore  = "5.4"
	DurFigCPU      = "5.5"
	DurFigQueue    = "5.6"
	DurFigsAll     = "5.1,5.2,5.3,5.4,5.5,5.6"
)

// parseDurFigs reads a comma-separated list of figure numbers.
func parseDurFigs(s string) (map[string]bool, error) {
	known := strings.Split(DurFigsAll, ",")
	figs := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(known, f) {
			return nil, fmt.Errorf("unknown figure %q (want some of %s)", f, DurFigsAll)
		}
		figs[f] = true
	}
	if len(figs) == 0 {
		return nil, fmt.Errorf("no figure (want some of %s)", DurFigsAll)
	}
	if figs[DurFigGet] && !figs[DurFigCreate] {
		return nil, fmt.Errorf("figure %s reads the nodes figure %s's phase creates; select both", DurFigGet, DurFigCreate)
	}
	return figs, nil
}

// selectFigs skips the phases of the figures not in figs: their durations
// become 0 and their tree sizes empty.
func (c *Config) selectFigs(figs map[string]bool) {
	if !figs[DurFigCreate] {
		c.CreateDuration = 0
	}
	if !figs[DurFigGet] {
		c.GetDuration = 0
	}
	if !figs[DurFigSnapshot] {
		c.SnapCounts = nil
	}
	if !figs[DurFigRestore] {
		c.RestoreCounts = nil
	}
	if !figs[DurFigCPU] {
		c.CPUDuration = 0
	}
	if !figs[DurFigQueue] {
		c.QueueDuration = 0
	}
}

// parseDurCounts reads a comma-separated list of tree sizes: integers,
// optionally with a k (thousand) or M (million) suffix ("250k", "1M").
// An empty list, or "none", is no size. The sizes come back ascending,
// each once.
func parseDurCounts(s string) ([]int64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := int64(1)
		switch {
		case strings.HasSuffix(f, "k"):
			f, mult = strings.TrimSuffix(f, "k"), 1000
		case strings.HasSuffix(f, "M"):
			f, mult = strings.TrimSuffix(f, "M"), 1000000
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("tree size %q is not a number", f)
		}
		if n > MaxDurTreeZnodes/mult {
			return nil, fmt.Errorf("tree size %s×%d is above %d", f, mult, MaxDurTreeZnodes)
		}
		n *= mult
		if n < MinDurTreeZnodes || n > MaxDurTreeZnodes {
			return nil, fmt.Errorf("tree size %d out of range [%d, %d]", n, MinDurTreeZnodes, MaxDurTreeZnodes)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatDurCounts is the inverse of parseDurCounts, for flag defaults.
func FormatDurCounts(c []int64) string {
	var parts []string
	for _, n := range c {
		parts = append(parts, strconv.FormatInt(n, 10))
	}
	return strings.Join(parts, ",")
}

// ParseTreeFlags applies --figs, --snap-counts and --restore-counts.
func (c *Config) ParseTreeFlags(figs, snap, restore string) error {
	var err error
	if c.SnapCounts, err = parseDurCounts(snap); err != nil {
		return fmt.Errorf("--snap-counts: %w", err)
	}
	if c.RestoreCounts, err = parseDurCounts(restore); err != nil {
		return fmt.Errorf("--restore-counts: %w", err)
	}
	f, err := parseDurFigs(figs)
	if err != nil {
		return fmt.Errorf("--figs: %w", err)
	}
	c.selectFigs(f)
	return nil
}
