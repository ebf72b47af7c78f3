package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// The epochs live where ZooKeeper keeps its own, in dataDir/version-2
// under the same names and in the same format (a decimal number), so an
// operator reads them the same way.
const (
	acceptedEpochFile = "acceptedEpoch"
	currentEpochFile  = "currentEpoch"
)

// readHardState reads the persisted epochs; missing files are epoch 0.
func (st *storage) readHardState() (zab.HardState, error) {
	var hs zab.HardState
	for _, f := range []struct {
		name string
		v    *uint32
	}{{acceptedEpochFile, &hs.AcceptedEpoch}, {currentEpochFile, &hs.CurrentEpoch}} {
		b, err := readFile(st.fs, filepath.Join(st.snapDir, f.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return hs, err
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
		if err != nil {
			return hs, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.v = uint32(n)
	}
	return hs, nil
}

// writeHardState writes the epochs durably: each file replaced
// atomically (write, fsync, rename, fsync the directory).
func (st *storage) writeHardState(hs zab.HardState, prev zab.HardState) error {
	for _, f := range []struct {
		name   string
		v, old uint32
	}{
		{acceptedEpochFile, hs.AcceptedEpoch, prev.AcceptedEpoch},
		{currentEpochFile, hs.CurrentEpoch, prev.CurrentEpoch},
	} {
		if f.v == f.old {
			continue
		}
		path := filepath.Join(st.snapDir, f.name)
		tmp := path + ".tmp"
		file, err := st.fs.Create(tmp)
		if err != nil {
			return err
		}
		_, err = file.Write([]byte(strconv.FormatUint(uint64(f.v), 10) + "\n"))
		if err == nil {
			err = file.Sync()
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
		if err := st.fs.Rename(tmp, path); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	return st.fs.SyncDir(st.snapDir)
}

func readFile(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64))
}

// writeSnapshotFile writes the body of the snapshot file for zxid to w
// (an empty tree's for 0), read as w takes it.
func (st *storage) writeSnapshotFile(zxid int64, w io.Writer) error {
	if zxid == 0 {
		return datatree.New().WriteSnapshot(w, nil)
	}
	infos, err := snap.Newest(st.fs, st.snapDir)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if info.Zxid != zxid {
			continue
		}
		r, err := snap.Open(st.fs, st.snapDir, info)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.Copy(w, r)
		return err
	}
	return fmt.Errorf("snapshot %s: %w", hex(zxid), os.ErrNotExist)
}

// treeImage opens a snapshot image of the tree for reading, from its
// start, once per call: an install reads it twice (the tree, then the
// snapshot file it keeps) so that a streamed image, spooled on disk, is
// never whole in memory beside the tree it makes.
type treeImage func() (io.ReadCloser, error)

// bytesImage is the image b.
func bytesImage(b []byte) treeImage {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// installSnapshot makes a snapshot received from the leader this server's
// newest, durably, and returns the tree it holds, whose LastZxid is the
// zxid the snapshot started at (replay repairs it from there). The log is
// cut back to the snapshot by the driver.
func (st *storage) installSnapshot(img treeImage) (*datatree.Tree, error) {
	r, err := img()
	if err != nil {
		return nil, fmt.Errorf("snapshot from the leader: %w", err)
	}
	tree, err := datatree.ReadSnapshot(r)
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("snapshot from the leader: %w", err)
	}
	// Packed here, before the apply goroutine owns the tree and while no
	// lock is held (installTree's call is then a no-op).
	packLogs(st.opts, tree)
	if st.rl != nil {
		// The image leaves out the payloads of entries up to this
		// member's last zxid (logData.image): they must be here.
		if missing := st.rl.missing(st.rl.referenced(tree)); len(missing) > 0 {
			return nil, fmt.Errorf("snapshot from the leader: it names %d log entries whose payloads are neither in it "+
				"nor in this member's data log (first: the entry created at %s); the data log was lost or damaged. "+
				"Move this member's data directory aside and restart it empty", len(missing), hex(missing[0]))
		}
	}
	w, err := snap.Create(st.fs, st.snapDir, tree.LastZxid())
	if err != nil {
		return nil, err
	}
	if r, err = img(); err == nil {
		_, err = io.Copy(w, r)
		r.Close()
	}
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("keeping the leader's snapshot: %w", err)
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	return tree, nil
}
