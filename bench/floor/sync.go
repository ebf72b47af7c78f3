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

// MaxLogBytes bounds each member's file: rounds × record size.
const MaxLogBytes = 256 << 20

// syncProbe is the disk half of the floor: members files in dir, one per
// member, each appended and fdatasynced once per round, all members at
// once. As a write-ahead log's segments (see package wal), each file is
// preallocated with zeros, made durable, before the first round, so that
// an append's fdatasync writes the record and never metadata (the size,
// the extent map): what the servers' logs pay, not more.
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
	if p.members < 1 || p.rounds < 1 || len(p.record) == 0 || int64(p.rounds)*int64(len(p.record)) > MaxLogBytes {
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
		if err := preallocate(f, int64(p.rounds)*int64(len(p.record))); err != nil {
			return nil, nil, err
		}
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
				if _, err := f.WriteAt(p.record, int64(round)*int64(len(p.record))); err != nil {
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

// preallocChunk is the size of each zero-filling write (as package wal's).
const preallocChunk = 64 << 10

// preallocate fills f with size zero bytes and makes them durable.
func preallocate(f *os.File, size int64) error {
	zeros := make([]byte, preallocChunk)
	for off := int64(0); off < size; off += preallocChunk {
		n := min(size-off, preallocChunk)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("bench: sync probe: preallocating: %w", err)
		}
	}
	if err := fdatasync(f); err != nil {
		return fmt.Errorf("bench: sync probe: preallocating: %w", err)
	}
	return nil
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
