package datatree

import (
	"fmt"

	"github.com/corral-db/corral/wire"
)

// Builder assembles a tree from nodes given one at a time with their
// stored stats, for importing another store's snapshot (package migrate
// reads ZooKeeper's). Nothing is validated against the history: the stats
// are taken as given.
type Builder struct {
	t    *Tree
	recs []nodeRec
	seen map[string]struct{}
}

// NewBuilder starts an empty tree whose last applied zxid is lastZxid.
func NewBuilder(lastZxid int64) *Builder {
	t := newEmptyTree()
	t.lastZxid = lastZxid
	return &Builder{t: t, seen: make(map[string]struct{})}
}

// AddSession adds an open session to the replicated session table.
func (b *Builder) AddSession(id int64, timeout int32) { b.t.setSession(id, timeout) }

// AddNode adds the node at path ("/" for the root). A nil acl is
// OPEN_ACL_UNSAFE. Adding a path twice, or a path that is not a valid
// znode path, is an error; a parent may come after its children.
func (b *Builder) AddNode(path string, data []byte, acl []wire.ACL, st PStat) error {
	if b.t == nil {
		return fmt.Errorf("datatree: builder already finished")
	}
	if !snapPathOK(path) {
		return fmt.Errorf("datatree: invalid node path %q", path)
	}
	if _, dup := b.seen[path]; dup {
		return fmt.Errorf("datatree: node %q added twice", path)
	}
	b.seen[path] = struct{}{}
	n := b.t.newNode(BaseName(path), b.t.acls.intern(acl), data, st)
	b.recs = append(b.recs, nodeRec{path: path, n: n})
	return nil
}

// Finish links the nodes into a tree. Every node but the root must have
// its parent; the first node missing one is reported (ReadSnapshot drops
// such nodes instead, since its input is fuzzy; an import's input is a
// complete tree).
func (b *Builder) Finish() (*Tree, error) {
	t := b.t
	if t == nil {
		return nil, fmt.Errorf("datatree: builder already finished")
	}
	b.t = nil
	if _, ok := b.seen[RootPath]; !ok {
		return nil, fmt.Errorf("datatree: no root node")
	}
	for _, r := range b.recs {
		if _, ok := b.seen[ParentPath(r.path)]; r.path != RootPath && !ok {
			return nil, fmt.Errorf("datatree: node %q has no parent", r.path)
		}
	}
	b.seen = nil
	if err := t.link(b.recs); err != nil {
		return nil, err
	}
	b.recs = nil
	return t, nil
}

// Renumber makes zxid the tree's last applied zxid, for a tree restored
// into a server whose history has gone further (the AdminServer's
// restore): the server's next write follows zxid, so zxids never go back
// for the clients that saw them. The node stats are kept. zxid below
// LastZxid is an error: the stats would name zxids from the future.
func (t *Tree) Renumber(zxid int64) error {
	if zxid < t.lastZxid {
		return fmt.Errorf("datatree: renumber to %#x below the last zxid %#x", zxid, t.lastZxid)
	}
	t.lastZxid = zxid
	return nil
}
