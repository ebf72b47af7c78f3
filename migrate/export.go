package migrate

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/atomicfile"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zkfmt"
)

// Export converts the corral dataDir o.From (and dataLogDir o.FromLog) of
// a stopped server into a ZooKeeper dataDir o.To: one uncompressed
// snapshot.<zxid> with an empty digest (ZooKeeper then skips comparing
// digests until its next snapshot) and the last processed zxid, plus the
// epochs. o.ToLog is created empty.
//
// The corral log is opened as the server opens it, so a torn record at its
// tail is repaired as a restart would; nothing else in From is changed
// (a damaged snapshot is skipped for an older one, not set aside).
func Export(o Options) (Result, error) {
	var res Result
	if o.From == "" || o.To == "" {
		return res, errors.New("migrate: both the corral dataDir and the ZooKeeper dataDir are needed")
	}
	if o.FromLog == "" {
		o.FromLog = o.From
	}
	if o.ToLog == "" {
		o.ToLog = o.To
	}
	log := o.logger()
	snapDir, logDir := dataDir(o.From), dataDir(o.FromLog)
	outSnap, outLog := dataDir(o.To), dataDir(o.ToLog)
	if err := mustBeFresh(outSnap, outLog); err != nil {
		return res, err
	}
	tree, name, err := loadCorral(snapDir, log)
	if err != nil {
		return res, err
	}
	res.SnapshotFile, res.SnapshotZxid = name, tree.LastZxid()
	n, err := replayCorralLog(logDir, tree, log)
	if err != nil {
		return res, err
	}
	res.Transactions = n
	res.Zxid = tree.LastZxid()
	res.Nodes = tree.NodeCount()
	res.Sessions = tree.SessionCount()

	zs := zkSnapshotOf(tree)
	if err := os.MkdirAll(outSnap, 0o755); err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	if err := os.MkdirAll(outLog, 0o755); err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	out := filepath.Join(outSnap, zkfmt.SnapshotName(res.Zxid))
	if err := writeZKSnapshot(out, zs); err != nil {
		return res, err
	}
	epoch := max(readEpochs(snapDir), uint32(uint64(res.Zxid)>>32))
	if err := writeEpochs(outSnap, epoch); err != nil {
		return res, err
	}
	res.Written = out
	log.Info("exported corral dataDir", "snapshot", name, "transactions", n,
		"zxid", fmt.Sprintf("%#x", res.Zxid), "nodes", res.Nodes, "written", out)
	return res, nil
}

// loadCorral reads the newest corral snapshot that is intact; with none,
// the tree a fresh server starts with.
func loadCorral(dir string, log *slog.Logger) (*datatree.Tree, string, error) {
	fsys := vfs.OS()
	infos, err := snap.Newest(fsys, dir)
	if err != nil {
		return nil, "", fmt.Errorf("migrate: %w", err)
	}
	for _, info := range infos {
		r, err := snap.Open(fsys, dir, info)
		if err != nil {
			if errors.Is(err, snap.ErrCorrupt) {
				log.Warn("skipping a damaged corral snapshot", "file", info.Name, "err", err)
				continue
			}
			return nil, "", fmt.Errorf("migrate: %w", err)
		}
		tree, err := datatree.ReadSnapshot(r)
		if err == nil {
			// Read to the end so the trailer's CRC is checked.
			_, err = io.Copy(io.Discard, r)
		}
		r.Close()
		if err == nil {
			return tree, info.Name, nil
		}
		if errors.Is(err, snap.ErrCorrupt) || errors.Is(err, datatree.ErrCorruptSnapshot) {
			log.Warn("skipping a damaged corral snapshot", "file", info.Name, "err", err)
			continue
		}
		return nil, "", fmt.Errorf("migrate: %s: %w", info.Name, err)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, "", fmt.Errorf("migrate: no corral dataDir at %s: %w", dir, err)
	}
	return datatree.New(), "", nil
}

// replayCorralLog applies the log's records after the tree's zxid, as a
// standalone server's recovery does.
func replayCorralLog(dir string, tree *datatree.Tree, log *slog.Logger) (int, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	w, err := wal.Open(vfs.OS(), dir, wal.Options{Logger: log})
	if err != nil {
		return 0, fmt.Errorf("migrate: opening the corral log: %w", err)
	}
	defer w.Close()
	var (
		h   txn.Header
		tx  txn.Txn
		res datatree.Result
	)
	n := 0
	err = w.ReadFrom(tree.LastZxid()+1, func(zxid int64, data []byte) error {
		if err := txn.Decode(data, &h, &tx); err != nil {
			return fmt.Errorf("log record %#x: %w", zxid, err)
		}
		// Apply keeps the data slices; data is only valid in the call.
		tx = cloneTxn(tx)
		res.Events = res.Events[:0]
		tree.Apply(&h, &tx, &res)
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("migrate: replaying the corral log: %w", err)
	}
	return n, nil
}

func cloneTxn(t txn.Txn) txn.Txn {
	if t.Data != nil {
		t.Data = slices.Clone(t.Data)
	}
	if t.Ops != nil {
		ops := make([]txn.Txn, len(t.Ops))
		for i := range t.Ops {
			ops[i] = cloneTxn(t.Ops[i])
		}
		t.Ops = ops
	}
	return t
}

// zkSnapshotOf lays the tree out as ZooKeeper's serializer does: depth
// first from the root (path ""), each distinct ACL list once in the cache.
func zkSnapshotOf(tree *datatree.Tree) *zkfmt.Snapshot {
	zs := &zkfmt.Snapshot{
		ACLs: make(map[int64][]wire.ACL),
		// An empty digest: ZooKeeper compares digests only from a snapshot
		// whose digest zxid is set.
		Digest:      &zkfmt.Digest{Version: zkfmt.DigestVersion},
		LastZxid:    tree.LastZxid(),
		HasLastZxid: true,
	}
	sessions := tree.Sessions()
	ids := make([]int64, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		zs.Sessions = append(zs.Sessions, zkfmt.Session{ID: id, Timeout: sessions[id]})
	}
	refs := make(map[string]int64)
	var walk func(path string)
	var kids []string
	walk = func(path string) {
		n := tree.Get(path)
		if n == nil {
			return
		}
		acl := tree.ACL(n)
		key := aclKey(acl)
		ref, ok := refs[key]
		if !ok {
			ref = int64(len(refs) + 1)
			refs[key] = ref
			zs.ACLs[ref] = slices.Clone(acl)
		}
		p := n.Persisted()
		zp := path
		if path == datatree.RootPath {
			zp = ""
		}
		zs.Nodes = append(zs.Nodes, zkfmt.Node{
			Path: zp, Data: n.Data(), ACL: ref,
			Stat: zkfmt.StatPersisted{
				Czxid: p.Czxid, Mzxid: p.Mzxid, Ctime: p.Ctime, Mtime: p.Mtime,
				Version: p.Version, Cversion: p.CVersion, Aversion: p.Aversion,
				EphemeralOwner: p.EphemeralOwner, Pzxid: p.Pzxid,
			},
		})
		kids = n.Children(kids[:0])
		children := slices.Clone(kids)
		slices.Sort(children)
		for _, c := range children {
			walk(zp + "/" + c)
		}
	}
	walk(datatree.RootPath)
	return zs
}

func aclKey(acl []wire.ACL) string {
	b := make([]byte, 0, 64)
	for _, a := range acl {
		b = fmt.Appendf(b, "%d\x00%s\x00%s\x00", a.Perms, a.ID.Scheme, a.ID.ID)
	}
	return string(b)
}

// writeZKSnapshot writes the file under a temporary name, fsyncs it and
// renames it into place, as ZooKeeper's AtomicFileOutputStream does
// (internal/atomicfile).
func writeZKSnapshot(path string, zs *zkfmt.Snapshot) error {
	err := atomicfile.Write(path, 0o666, func(w io.Writer) error { return zkfmt.EncodeSnapshot(w, zs) })
	if err != nil {
		return fmt.Errorf("migrate: writing %s: %w", path, err)
	}
	return nil
}
