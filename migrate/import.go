package migrate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/atomicfile"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zkfmt"
)

// Options names the directories of one conversion. LogDir and ToLogDir
// default to Dir and To (ZooKeeper's dataLogDir defaults to dataDir, and
// so does corral's). Each may name the dataDir itself or its version-2
// subdirectory.
type Options struct {
	From, FromLog string
	To, ToLog     string
	Logger        *slog.Logger
}

// Result says what a conversion did.
type Result struct {
	Zxid         int64  // the last zxid, the snapshot written is of it
	SnapshotZxid int64  // the zxid of the snapshot read
	SnapshotFile string // the snapshot read
	Transactions int    // log records applied after that snapshot
	Nodes        int
	Sessions     int
	Written      string // the snapshot file written
}

const versionDir = "version-2"

// dataDir returns dir/version-2, or dir itself if it is already named so.
func dataDir(dir string) string {
	if filepath.Base(filepath.Clean(dir)) == versionDir {
		return dir
	}
	return filepath.Join(dir, versionDir)
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Import converts the ZooKeeper dataDir o.From (and dataLogDir o.FromLog)
// into a corral dataDir o.To (and o.ToLog).
func Import(o Options) (Result, error) {
	var res Result
	if o.From == "" || o.To == "" {
		return res, errors.New("migrate: both the ZooKeeper dataDir and the corral dataDir are needed")
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

	zs, file, zxid, err := newestZKSnapshot(snapDir, log)
	if err != nil {
		return res, err
	}
	res.SnapshotFile, res.SnapshotZxid = file, zxid
	tree, err := treeFromZK(zs, zxid)
	if err != nil {
		return res, fmt.Errorf("migrate: %s: %w", file, err)
	}
	n, err := replayZKLogs(logDir, tree, log)
	if err != nil {
		return res, err
	}
	res.Transactions = n
	res.Zxid = tree.LastZxid()
	res.Nodes = tree.NodeCount()
	res.Sessions = tree.SessionCount()

	epoch := max(readEpochs(snapDir), uint32(uint64(res.Zxid)>>32))
	written, err := writeCorral(outSnap, outLog, tree, epoch)
	if err != nil {
		return res, err
	}
	res.Written = written
	log.Info("imported ZooKeeper dataDir", "snapshot", file, "transactions", n,
		"zxid", fmt.Sprintf("%#x", res.Zxid), "nodes", res.Nodes, "written", written)
	return res, nil
}

// mustBeFresh refuses target directories that already hold a server's
// files: a conversion never overwrites state.
func mustBeFresh(dirs ...string) error {
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, "snapshot.") || strings.HasPrefix(n, "log.") || strings.HasPrefix(n, "wal.") ||
				n == "acceptedEpoch" || n == "currentEpoch" {
				return fmt.Errorf("migrate: %s already holds %s; give an empty directory (nothing is overwritten)", dir, n)
			}
		}
	}
	return nil
}

type zkFile struct {
	name string
	zxid int64
	comp zkfmt.Compression
}

// newestZKSnapshot loads the newest snapshot that decodes, as ZooKeeper's
// FileSnap.deserialize does (it tries up to 100, newest first).
func newestZKSnapshot(dir string, log *slog.Logger) (*zkfmt.Snapshot, string, int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", 0, fmt.Errorf("migrate: reading the ZooKeeper dataDir: %w", err)
	}
	var files []zkFile
	for _, e := range ents {
		if zxid, c, ok := zkfmt.ParseSnapshotName(e.Name()); ok && e.Type().IsRegular() {
			files = append(files, zkFile{e.Name(), zxid, c})
		}
	}
	if len(files) == 0 {
		return nil, "", 0, fmt.Errorf("migrate: no ZooKeeper snapshot (snapshot.<zxid>) in %s", dir)
	}
	slices.SortFunc(files, func(a, b zkFile) int { return -cmpInt(a.zxid, b.zxid) })
	var errs []error
	for i, f := range files {
		if i == 100 {
			break
		}
		s, err := readZKSnapshot(filepath.Join(dir, f.name), f.comp)
		if err == nil {
			return s, f.name, f.zxid, nil
		}
		if !errors.Is(err, zkfmt.ErrCorrupt) {
			return nil, "", 0, fmt.Errorf("migrate: %s: %w", f.name, err)
		}
		log.Warn("skipping an invalid ZooKeeper snapshot, trying an older one", "file", f.name, "err", err)
		errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
	}
	return nil, "", 0, fmt.Errorf("migrate: no valid ZooKeeper snapshot in %s: %w", dir, errors.Join(errs...))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func readZKSnapshot(path string, c zkfmt.Compression) (*zkfmt.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := zkfmt.Decompress(f, c)
	if err != nil {
		return nil, err
	}
	return zkfmt.DecodeSnapshot(r)
}

// treeFromZK builds corral's tree from a decoded ZooKeeper snapshot whose
// file is named after zxid.
func treeFromZK(zs *zkfmt.Snapshot, zxid int64) (*datatree.Tree, error) {
	b := datatree.NewBuilder(zxid)
	for _, s := range zs.Sessions {
		b.AddSession(s.ID, s.Timeout)
	}
	for i := range zs.Nodes {
		nd := &zs.Nodes[i]
		path := nd.Path
		if path == "" {
			path = datatree.RootPath
		}
		acl := zs.ACLs[nd.ACL] // nil for OpenUnsafeACLRef: OPEN_ACL_UNSAFE
		s := &nd.Stat
		st := datatree.PStat{
			Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime,
			Version: s.Version, CVersion: s.Cversion, Aversion: s.Aversion,
			EphemeralOwner: s.EphemeralOwner, Pzxid: s.Pzxid,
		}
		if err := b.AddNode(path, nd.Data, acl, st); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// replayZKLogs applies, in zxid order, every logged transaction after the
// tree's zxid: from the newest log file starting at or before it and all
// later ones (FileTxnLog.getLogFiles).
func replayZKLogs(dir string, tree *datatree.Tree, log *slog.Logger) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("migrate: reading the ZooKeeper dataLogDir: %w", err)
	}
	var files []zkFile
	for _, e := range ents {
		if zxid, ok := zkfmt.ParseLogName(e.Name()); ok && e.Type().IsRegular() {
			files = append(files, zkFile{name: e.Name(), zxid: zxid})
		}
	}
	slices.SortFunc(files, func(a, b zkFile) int { return cmpInt(a.zxid, b.zxid) })
	start := 0
	for i, f := range files {
		if f.zxid <= tree.LastZxid() {
			start = i
		}
	}
	var (
		h   txn.Header
		tx  txn.Txn
		res datatree.Result
	)
	n := 0
	for _, f := range files[start:] {
		err := readZKLog(filepath.Join(dir, f.name), func(rec []byte) error {
			if _, err := zkfmt.DecodeTxn(rec, &h, &tx); err != nil {
				return err
			}
			if h.Zxid <= tree.LastZxid() {
				return nil
			}
			slices.Sort(tx.Paths) // corral's closeSession names them sorted
			if n == 0 && h.Zxid != tree.LastZxid()+1 {
				log.Warn("the first logged transaction after the snapshot is not the next zxid: transactions are missing",
					"snapshot", fmt.Sprintf("%#x", tree.LastZxid()), "first", fmt.Sprintf("%#x", h.Zxid))
			}
			res.Events = res.Events[:0]
			tree.Apply(&h, &tx, &res)
			n++
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("migrate: %s: %w", f.name, err)
		}
	}
	return n, nil
}

func readZKLog(path string, fn func(rec []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	lr, err := zkfmt.NewLogReader(f)
	if err != nil {
		return err
	}
	for {
		rec, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// readEpochs returns the larger of the epochs a dataDir records (0 if
// none).
func readEpochs(dir string) uint32 {
	var e uint32
	for _, name := range []string{"acceptedEpoch", "currentEpoch"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32); err == nil {
			e = max(e, uint32(v))
		}
	}
	return e
}

func writeEpochs(dir string, epoch uint32) error {
	for _, name := range []string{"acceptedEpoch", "currentEpoch"} {
		if err := writeFileSync(filepath.Join(dir, name), []byte(strconv.FormatUint(uint64(epoch), 10)+"\n")); err != nil {
			return err
		}
	}
	return nil
}

// writeFileSync writes a file durably under a temporary name and renames
// it into place (internal/atomicfile).
func writeFileSync(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b, 0o666); err != nil {
		return fmt.Errorf("migrate: writing %s: %w", path, err)
	}
	return nil
}

// writeCorral writes the tree as corral's snapshot of its last zxid, the
// epochs beside it, and creates the (empty) log directory.
func writeCorral(snapDir, logDir string, tree *datatree.Tree, epoch uint32) (string, error) {
	fsys := vfs.OS()
	if err := fsys.MkdirAll(logDir, 0o755); err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	w, err := snap.Create(fsys, snapDir, tree.LastZxid())
	if err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	if err := tree.WriteSnapshot(w, nil); err != nil {
		w.Abort()
		return "", fmt.Errorf("migrate: writing the corral snapshot: %w", err)
	}
	if err := w.Commit(); err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	if err := writeEpochs(snapDir, epoch); err != nil {
		return "", err
	}
	return filepath.Join(snapDir, snap.Name(tree.LastZxid())), nil
}

// ReadZooKeeperSnapshot decodes one ZooKeeper 3.9 snapshot stream (what
// ZooKeeper's AdminServer snapshot command streams, plain or
// gzip-compressed) into a tree. The stream must record its last processed
// zxid (zookeeper.serializeLastProcessedZxid.enabled, on by default),
// which ZooKeeper's own restore requires too: a stream carries no file
// name to take the zxid from.
func ReadZooKeeperSnapshot(r io.Reader) (*datatree.Tree, error) {
	br := bufio.NewReader(r)
	c := zkfmt.CompressionNone
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		c = zkfmt.CompressionGzip
	}
	dr, err := zkfmt.Decompress(br, c)
	if err != nil {
		return nil, err
	}
	zs, err := zkfmt.DecodeSnapshot(dr)
	if err != nil {
		return nil, err
	}
	if !zs.HasLastZxid {
		return nil, errors.New("migrate: the ZooKeeper snapshot does not record its last zxid " +
			"(zookeeper.serializeLastProcessedZxid.enabled=false where it was taken)")
	}
	return treeFromZK(zs, zs.LastZxid)
}
