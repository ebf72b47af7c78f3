package fakezk

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/corral-db/corral/wire"
)

// Tree is an in-memory server for the durability phases: it decodes
// every request strictly, keeps a tree with sequential nodes, answers
// each request as it is read, and records what a queue test checks: the
// order in which each session deleted nodes, and any node deleted twice.
type Tree struct {
	loop
	Ln net.Listener

	Mu       sync.Mutex
	Nodes    map[string][]byte
	Seq      map[string]int // next sequence number per parent
	deleted  map[string]bool
	Deletes  map[int64][]string // session -> paths it deleted, in order
	Sessions int64
	Closed   int
	problems []string
}

func NewTree(t *testing.T) *Tree {
	t.Helper()
	f := &Tree{
		Nodes: map[string][]byte{"/": {}}, Seq: map[string]int{},
		deleted: map[string]bool{}, Deletes: map[int64][]string{},
	}
	f.loop = loop{mu: &f.Mu, sessions: &f.Sessions, problems: &f.problems, handle: f.handleLocked}
	f.listen(t, true)
	f.Ln = f.ln
	return f
}

func (f *Tree) Addr() string { return f.addr() }

func parentOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

func (f *Tree) handleLocked(sid int64, xid int32, op wire.Op, d *wire.Decoder) (code wire.Code, replyBody func(*wire.Encoder), known bool) {
	switch op {
	case wire.OpCreate:
		path, data, acl, mode := d.String(), d.Buffer(), d.ACLs(), d.Int()
		if len(acl) != 1 || acl[0] != wire.OpenACLUnsafe[0] || data == nil ||
			mode != wire.ModePersistent && mode != wire.ModePersistentSequential {
			f.problems = append(f.problems, fmt.Sprintf("bad create %q acl %v mode %d", path, acl, mode))
		}
		parent := parentOf(path)
		if mode == wire.ModePersistentSequential {
			path = fmt.Sprintf("%s%010d", path, f.Seq[parent])
			f.Seq[parent]++
		}
		switch {
		case f.Nodes[parent] == nil:
			code = wire.CodeNoNode
		case f.Nodes[path] != nil:
			code = wire.CodeNodeExists
		default:
			f.Nodes[path] = data
			replyBody = func(out *wire.Encoder) { out.String(path) }
		}
	case wire.OpGetData:
		path, watch := d.String(), d.Bool()
		if watch {
			f.problems = append(f.problems, fmt.Sprintf("getData %q with a watch", path))
		}
		if data := f.Nodes[path]; data == nil {
			code = wire.CodeNoNode
		} else {
			replyBody = func(out *wire.Encoder) { out.Buffer(data); out.Stat(&wire.Stat{DataLength: int32(len(data))}) }
		}
	case wire.OpDelete:
		path, version := d.String(), d.Int()
		if version != -1 {
			f.problems = append(f.problems, fmt.Sprintf("bad delete %q version %d", path, version))
		}
		if f.Nodes[path] == nil {
			code = wire.CodeNoNode
		} else {
			if f.deleted[path] {
				f.problems = append(f.problems, fmt.Sprintf("%s deleted twice", path))
			}
			delete(f.Nodes, path)
			f.deleted[path] = true
			f.Deletes[sid] = append(f.Deletes[sid], path)
		}
	case wire.OpGetChildren:
		path, watch := d.String(), d.Bool()
		if watch {
			f.problems = append(f.problems, fmt.Sprintf("getChildren %q with a watch", path))
		}
		if f.Nodes[path] == nil {
			code = wire.CodeNoNode
			break
		}
		var names []string
		for p := range f.Nodes {
			if p != "/" && parentOf(p) == path {
				names = append(names, p[len(path)+1:])
			}
		}
		// A real server lists in no particular order; reverse order makes
		// a consumer that forgets to sort take messages out of order.
		slices.Sort(names)
		slices.Reverse(names)
		replyBody = func(out *wire.Encoder) { out.Strings(names) }
	case wire.OpCloseSession:
		f.Closed++
	default:
		return 0, nil, false
	}
	return code, replyBody, true
}
