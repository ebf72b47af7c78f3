package snap

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/corral-db/corral/vfs"
)

// MinRetain is the fewest snapshots Purge keeps, as ZooKeeper's
// autopurge.snapRetainCount minimum.
const MinRetain = 3

// Purge removes all but the newest retain snapshots (retain below
// MinRetain counts as MinRetain) and returns the zxid of the oldest kept
// one, below which the log is no longer needed. With no snapshot it returns
// 0. Temporary and .corrupt files are left alone.
func Purge(fsys vfs.FS, dir string, retain int) (keptOldestZxid int64, err error) {
	retain = max(retain, MinRetain)
	infos, err := Newest(fsys, dir)
	if err != nil || len(infos) == 0 {
		return 0, err
	}
	kept := infos[:min(retain, len(infos))]
	drop := infos[len(kept):]
	for i := len(drop) - 1; i >= 0; i-- { // oldest first
		if err := fsys.Remove(filepath.Join(dir, drop[i].Name)); err != nil {
			return 0, fmt.Errorf("snap: purging: %w", err)
		}
	}
	if len(drop) > 0 {
		if err := fsys.SyncDir(dir); err != nil {
			return 0, fmt.Errorf("snap: purging: %w", err)
		}
	}
	return kept[len(kept)-1].Zxid, nil
}

// CleanTemp removes the temporary files of snapshots whose writing never
// finished. Call it at startup, before any Writer exists.
func CleanTemp(fsys vfs.FS, dir string) error {
	names, err := fsys.List(dir)
	if err != nil {
		if ok, _ := vfs.Exists(fsys, dir); !ok {
			return nil
		}
		return fmt.Errorf("snap: %w", err)
	}
	removed := false
	for _, name := range names {
		base, ok := strings.CutSuffix(name, tmpSuffix)
		if !ok {
			continue
		}
		if _, ok := parseName(base); !ok {
			continue
		}
		if err := fsys.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("snap: %w", err)
		}
		removed = true
	}
	if removed {
		return fsys.SyncDir(dir)
	}
	return nil
}
