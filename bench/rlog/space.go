package rlog

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// freeBytes is what an unprivileged writer may still write in dir's file
// system (the blocks available to non-root users can be far fewer than
// the free ones).
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("bench: statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// growSpace is the disk the memory phase needs in the run's directory:
// every member stores every byte of the log once in its data log, plus
// a tenth for the WAL, the retained snapshots and a partly used segment.
func growSpace(members int, growBytes int64) int64 {
	return int64(members) * (growBytes + growBytes/10)
}

// checkGrowSpace refuses to start a memory phase that would fill dir's
// disk: a member that cannot write its log exits, and the run would end
// in failed appends instead of the figure.
func checkGrowSpace(dir string, members int, growBytes int64) error {
	free, err := freeBytes(dir)
	if err != nil {
		return err
	}
	if need := growSpace(members, growBytes); free < need {
		return fmt.Errorf("bench: the memory phase needs about %.1f GiB free in %s (%d members × %.1f GiB and a tenth more); %.1f GiB are: lower -grow-bytes or pass -workdir on a larger disk",
			gib(need), dir, members, gib(growBytes), gib(free))
	}
	return nil
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }
