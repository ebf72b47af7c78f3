package floor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

// Quorum is the number of members whose log must hold a write before it
// commits: a majority of n.
func Quorum(n int) int { return n/2 + 1 }

// syncProbe is the disk half of the floor: members files in dir, one per
// member, each appended and fdatasynced once per round, all members at
// once.
type syncProbe struct {
	dir     string
	members int
	rounds  int
	record  []byte
}

// syncRound is one round's outcome: when each member's fdatasync returned,
// measured from the round's start, in the order they returned.
type syncRound []time.Duration

// commit is the time until a quorum of the members had synced.
func (r syncRound) commit(members int) time.Duration { return r[Quorum(members)-1] }

// run runs the rounds and returns each round's latency to a quorum and the
// number of records written per member. Its files are removed before it
// returns, whatever happened.
func (p syncProbe) run(ctx context.Context) (*stats.Hist, []int, error) {
	if p.members < 1 || p.rounds < 1 || len(p.record) == 0 {
		return nil, nil, fmt.Errorf("bench: sync probe needs members, rounds and a record (got %d, %d, %d bytes)",
			p.members, p.rounds, len(p.record))
	}
	files := make([]*os.File, p.members)
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	for i := range files {
		f, err := os.CreateTemp(p.dir, fmt.Sprintf("floor-log-%d-*", i))
		if err != nil {
			return nil, nil, fmt.Errorf("bench: sync probe: %w", err)
		}
		files[i] = f
	}
	// The new files' directory entries are durable before the first round,
	// so that no round pays for them.
	if err := syncDir(p.dir); err != nil {
		return nil, nil, err
	}
	hist := stats.NewHist()
	written := make([]int, p.members)
	done := make([]time.Duration, p.members)
	errs := make([]error, p.members)
	for round := 0; round < p.rounds; round++ {
		if err := ctx.Err(); err != nil {
			return hist, written, err
		}
		var wg sync.WaitGroup
		start := time.Now()
		for i, f := range files {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.Write(p.record); err != nil {
					errs[i] = err
					return
				}
				written[i]++
				errs[i] = fdatasync(f)
				done[i] = time.Since(start)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return hist, written, fmt.Errorf("bench: sync probe: %w", err)
		}
		r := syncRound(append([]time.Duration(nil), done...))
		sort.Slice(r, func(a, b int) bool { return r[a] < r[b] })
		hist.Record(r.commit(p.members))
	}
	return hist, written, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("bench: sync probe: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("bench: sync probe: syncing %s: %w", filepath.Base(dir), err)
	}
	return nil
}
