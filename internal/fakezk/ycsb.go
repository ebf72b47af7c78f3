package fakezk

import (
	"fmt"
	"sync"
	"testing"

	"github.com/corral-db/corral/wire"
)

// YCSB is an in-memory server for the YCSB phases: it decodes every
// request strictly, keeps versioned nodes (setData checks the version),
// answers each request as it is read (so pipelined requests are answered
// in order), and answers srvr.
type YCSB struct {
	loop

	// Drop, if set, says which sessions (numbered from 1 in the order
	// they were established) have their connection closed, unanswered,
	// at their first getData: a server dying under those clients.
	Drop func(session int64) bool
	// ConflictAll fails every conditional setData with BadVersion, as if
	// another client always wrote in between.
	ConflictAll bool

	Mu          sync.Mutex
	nodes       map[string]*ycsbNode
	SetVersions map[int32]int // setData requests by version asked
	Sessions    int64
	Closed      int
	problems    []string
}

type ycsbNode struct {
	data    []byte
	version int32
}

func NewYCSB(t *testing.T) *YCSB {
	t.Helper()
	f := &YCSB{nodes: map[string]*ycsbNode{"/": {}}, SetVersions: map[int32]int{}}
	f.loop = loop{
		mu: &f.Mu, sessions: &f.Sessions, problems: &f.problems,
		handle: f.handleLocked,
		srvr:   func() string { return "Zookeeper version: ycsb fake\nMode: standalone\n" },
		drop:   func(sid int64, op wire.Op) bool { return op == wire.OpGetData && f.Drop != nil && f.Drop(sid) },
	}
	f.listen(t, true)
	return f
}

func (f *YCSB) Addr() string { return f.addr() }

func (f *YCSB) handleLocked(sid int64, xid int32, op wire.Op, d *wire.Decoder) (code wire.Code, replyBody func(*wire.Encoder), known bool) {
	switch op {
	case wire.OpCreate:
		path, data, acl, mode := d.String(), d.Buffer(), d.ACLs(), d.Int()
		if len(acl) != 1 || acl[0] != wire.OpenACLUnsafe[0] || data == nil || mode != wire.ModePersistent {
			f.problems = append(f.problems, fmt.Sprintf("bad create %q acl %v mode %d", path, acl, mode))
		}
		switch {
		case f.nodes[parentOf(path)] == nil:
			code = wire.CodeNoNode
		case f.nodes[path] != nil:
			code = wire.CodeNodeExists
		default:
			f.nodes[path] = &ycsbNode{data: data}
			replyBody = func(out *wire.Encoder) { out.String(path) }
		}
	case wire.OpGetData:
		path, watch := d.String(), d.Bool()
		if watch {
			f.problems = append(f.problems, fmt.Sprintf("getData %q with a watch", path))
		}
		if n := f.nodes[path]; n == nil {
			code = wire.CodeNoNode
		} else {
			st := wire.Stat{Version: n.version, DataLength: int32(len(n.data))}
			data := n.data
			replyBody = func(out *wire.Encoder) { out.Buffer(data); out.Stat(&st) }
		}
	case wire.OpSetData:
		path, data, version := d.String(), d.Buffer(), d.Int()
		f.SetVersions[version]++
		n := f.nodes[path]
		switch {
		case len(data) != ycsbRecordSize:
			f.problems = append(f.problems, fmt.Sprintf("setData %q of %d bytes", path, len(data)))
		case n == nil:
			code = wire.CodeNoNode
		case version != -1 && (f.ConflictAll || version != n.version):
			code = wire.CodeBadVersion
		default:
			n.data, n.version = data, n.version+1
			st := wire.Stat{Version: n.version, DataLength: int32(len(data))}
			replyBody = func(out *wire.Encoder) { out.Stat(&st) }
		}
	case wire.OpCloseSession:
		f.Closed++
	default:
		return 0, nil, false
	}
	return code, replyBody, true
}

// Records returns the children of table and their data.
func (f *YCSB) Records(table string) map[string][]byte {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := map[string][]byte{}
	for p, n := range f.nodes {
		if parentOf(p) == table {
			out[p] = n.data
		}
	}
	return out
}
