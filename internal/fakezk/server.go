package fakezk

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/corral-db/corral/wire"
)

// Server is the fake the load generator's tests run against: it
// answers create, setData, getData, delete, ping and closeSession from an
// in-memory map of paths, releases replies as its Mode says, and answers
// srvr. Its problems fail the test when the test calls Check.
type Server struct {
	loop
	t       *testing.T
	Timeout int32 // negotiated session timeout, ms
	// FailCreate, if set, makes create of path fail with the code it returns.
	FailCreate func(path string) wire.Code
	// Srvr, if set, answers srvr; Resume accepts a handshake that resumes
	// a session (the id is echoed) instead of reporting it as a problem.
	// Both are read with Mu held.
	Srvr   func() string
	Resume bool

	Mu        sync.Mutex
	Nodes     map[string][]byte
	Attempted map[string]bool // every path a create was sent for
	pings     int
	Sessions  int64
	Closed    int // sessions closed with closeSession
	Problems  []string
}

// NewServer serves on a loopback port until the test ends.
func NewServer(t *testing.T, mode Mode, window int) *Server {
	t.Helper()
	s := newServer(mode, window)
	s.t = t
	s.listen(t, false)
	return s
}

// Start serves on ln until Stop.
func Start(ln net.Listener, mode Mode, window int) *Server {
	s := newServer(mode, window)
	s.serveOn(ln)
	return s
}

func newServer(mode Mode, window int) *Server {
	s := &Server{
		Timeout: 30000,
		Nodes:   map[string][]byte{"/": nil}, Attempted: map[string]bool{},
	}
	s.loop = loop{
		mode: mode, window: window,
		handle: s.handleLocked,
		mu:     &s.Mu, sessions: &s.Sessions, problems: &s.Problems,
		srvr: func() string {
			s.Mu.Lock()
			srvr := s.Srvr
			s.Mu.Unlock()
			if srvr != nil {
				return srvr()
			}
			return "Zookeeper version: fake\nMode: standalone\n"
		},
		timeout: func(int32) int32 { return s.Timeout },
		resume:  func() bool { return s.Resume },
	}
	return s
}

// Stop closes the listener and waits for every connection to end.
func (s *Server) Stop() { s.stop() }

// Crash stops accepting and drops every connection, as a killed server's
// kernel would.
func (s *Server) Crash() { s.crash() }

func (s *Server) Addr() string { return s.addr() }

// Check fails the test with everything the server found wrong.
func (s *Server) Check() {
	s.t.Helper()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, p := range s.Problems {
		s.t.Error("fake server:", p)
	}
}

// handleLocked decodes one request strictly (see handler).
func (s *Server) handleLocked(sid int64, xid int32, op wire.Op, d *wire.Decoder) (code wire.Code, replyBody func(*wire.Encoder), known bool) {
	var stat wire.Stat
	switch op {
	case wire.OpCreate:
		path, data, acl, flags := d.String(), d.Buffer(), d.ACLs(), d.Int()
		if len(acl) != 1 || acl[0] != wire.OpenACLUnsafe[0] || flags != wire.ModePersistent || data == nil {
			s.Problems = append(s.Problems, fmt.Sprintf("bad create %q acl %v flags %d", path, acl, flags))
		}
		s.Attempted[path] = true
		switch {
		case s.FailCreate != nil && s.FailCreate(path) != 0:
			code = s.FailCreate(path)
		case s.Nodes[path] != nil:
			code = wire.CodeNodeExists
		default:
			s.Nodes[path] = data
			replyBody = func(out *wire.Encoder) { out.String(path) }
		}
	case wire.OpSetData:
		path, data, version := d.String(), d.Buffer(), d.Int()
		if version != -1 || data == nil {
			s.Problems = append(s.Problems, fmt.Sprintf("bad setData %q version %d", path, version))
		}
		if !s.Attempted[path] {
			s.Problems = append(s.Problems, fmt.Sprintf("setData of %q, never created", path))
		}
		if s.Nodes[path] == nil {
			code = wire.CodeNoNode
		} else {
			s.Nodes[path] = data
			stat.DataLength = int32(len(data))
			replyBody = func(out *wire.Encoder) { out.Stat(&stat) }
		}
	case wire.OpGetData:
		path, watch := d.String(), d.Bool()
		if watch {
			s.Problems = append(s.Problems, fmt.Sprintf("getData %q with a watch", path))
		}
		if !s.Attempted[path] {
			s.Problems = append(s.Problems, fmt.Sprintf("getData of %q, never created", path))
		}
		if data := s.Nodes[path]; data == nil {
			code = wire.CodeNoNode
		} else {
			stat.DataLength = int32(len(data))
			replyBody = func(out *wire.Encoder) { out.Buffer(data); out.Stat(&stat) }
		}
	case wire.OpDelete:
		path, version := d.String(), d.Int()
		if version != -1 {
			s.Problems = append(s.Problems, fmt.Sprintf("bad delete %q version %d", path, version))
		}
		delete(s.Nodes, path)
	case wire.OpPing:
		s.pings++
		if xid != wire.XidPing {
			s.Problems = append(s.Problems, fmt.Sprintf("ping with xid %d", xid))
		}
	case wire.OpCloseSession:
		s.Closed++
	default:
		return 0, nil, false
	}
	return code, replyBody, true
}

// FailEveryTenth fails create of node i when i%10 == 9.
func FailEveryTenth(path string) wire.Code {
	i, err := strconv.Atoi(path[strings.LastIndexByte(path, '-')+1:])
	if err == nil && i%10 == 9 {
		return wire.CodeNodeExists
	}
	return 0
}
