package server

import (
	"slices"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// Data-log space of the logs under rlog.root: the records of removed
// entries are released once no kept snapshot or replay can need them
// (docs/design/rlog.md, "Space").

// removedRefs returns the references held by the entries a transaction
// may delete or overwrite, read from the tree before it applies (apply
// goroutine, under the tree's lock). noteRemoved then keeps those that
// it did remove.
func (d *logData) removedRefs(get func(string) []byte, tx *txn.Txn, dst []removed) []removed {
	switch tx.Type {
	case wire.OpDelete, wire.OpSetData:
		if d.entryPath(tx.Path) {
			if ref, ok := parseRef(get(tx.Path)); ok {
				dst = append(dst, removed{path: tx.Path, ref: ref})
			}
		}
	case wire.OpMulti:
		for i := range tx.Ops {
			dst = d.removedRefs(get, &tx.Ops[i], dst)
		}
	}
	return dst
}

type removed struct {
	path string
	ref  entryRef
}

// noteRemoved queues the records of the entries in rs that the
// transaction at zxid removed (the path no longer holds the reference).
func (d *logData) noteRemoved(get func(string) []byte, zxid int64, rs []removed) {
	if len(rs) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range rs {
		if now, ok := parseRef(get(r.path)); ok && now == r.ref {
			continue
		}
		d.dead.push(zxid, r.ref.zxid)
	}
}

// releaseUpTo releases the dead records whose removal a durable snapshot
// at zxid covers.
func (d *logData) releaseUpTo(zxid int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead.popUpTo(zxid, d.releaseLocked)
	d.idx.compact()
}

func (d *logData) releaseLocked(zxid int64) {
	r, ok := d.idx.release(zxid)
	if !ok {
		return
	}
	if err := d.dl.Release(r.pos.Seg, datalog.RecordSize(r.n)); err != nil {
		d.log.Warn("releasing a data-log record failed; its space stays", "zxid", hex(zxid), "err", err)
	}
}

// sweep releases, at open, the records of entries created at or before
// zxid that the tree loaded no longer references (openLogs says why that
// is safe).
func (d *logData) sweep(zxid int64, referenced []int64) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	var gone []int64
	d.idx.all(func(r rec) {
		if _, named := slices.BinarySearch(referenced, r.zxid); r.zxid <= zxid && !named {
			gone = append(gone, r.zxid)
		}
	})
	for _, z := range gone {
		d.releaseLocked(z)
	}
	d.idx.compact()
	return len(gone)
}

// referenced returns, sorted, the zxids of the payloads the tree's
// entries name: 8 bytes each, where a set (a map) took ~40, for the
// millions of entries a large log has.
func (d *logData) referenced(tree *datatree.Tree) []int64 {
	root := tree.Get(d.root)
	if root == nil {
		return nil
	}
	var out []int64
	for _, log := range root.Children(nil) {
		tree.EachChildData(d.root+"/"+log, func(data []byte) {
			if ref, ok := parseRef(data); ok {
				out = append(out, ref.zxid)
			}
		})
	}
	slices.Sort(out)
	return out
}

// nodeData is a node's data, nil if there is no such node (under the
// tree's lock).
func (s *Server) nodeData(path string) []byte {
	if n := s.tree.Get(path); n != nil {
		return n.Data()
	}
	return nil
}

// missing returns, sorted, the zxids in refs (sorted) that have no
// record.
func (d *logData) missing(refs []int64) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []int64
	for _, z := range refs {
		if _, ok := d.idx.find(z); !ok {
			out = append(out, z)
		}
	}
	return out
}
