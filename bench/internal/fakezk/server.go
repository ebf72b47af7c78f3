package fakezk

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// Mode selects how the fake server releases replies. Whatever the
// mode, it decodes every request strictly and answers from an in-memory
// tree, so the tests check both the bytes the generator sends and how it
// matches replies.
type Mode int

const (
	// InOrder answers each request as it is read.
	InOrder Mode = iota
	// Hold keeps replies until window requests are unanswered, then checks
	// that the client sends nothing more before answering all of them. A
	// generator that does not pipeline never fills the window (and stalls);
	// one that overruns its window is caught.
	Hold
	// Swap answers requests in pairs, second one first.
	Swap
	// PingGate keeps replies until the client pings.
	PingGate
	// Silent never answers a request after the handshake.
	Silent
)

type Server struct {
	t       *testing.T
	ln      net.Listener
	mode    Mode
	window  int
	Timeout int32 // negotiated session timeout, ms
	// FailCreate, if set, makes create of path fail with the code it returns.
	FailCreate func(path string) wire.Code
	// Srvr, if set, answers srvr; resume accepts a handshake that resumes
	// a session (the id is echoed) instead of reporting it as a problem.
	Srvr   func() string
	Resume bool

	Mu        sync.Mutex
	Nodes     map[string][]byte
	Attempted map[string]bool // every path a create was sent for
	ops       map[wire.Op]int
	pings     int
	Sessions  int64
	Closed    int // sessions closed with closeSession
	open      map[net.Conn]bool
	Problems  []string
	wg        sync.WaitGroup
}

func NewServer(t *testing.T, mode Mode, window int) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := Start(ln, mode, window)
	s.t = t
	t.Cleanup(s.Stop)
	return s
}

// Start serves on ln until stop.
func Start(ln net.Listener, mode Mode, window int) *Server {
	s := &Server{
		ln: ln, mode: mode, window: window, Timeout: 30000,
		Nodes: map[string][]byte{"/": nil}, Attempted: map[string]bool{},
		ops: map[wire.Op]int{}, open: map[net.Conn]bool{},
	}
	s.wg.Add(1)
	go s.accept()
	return s
}

func (s *Server) Stop() {
	s.ln.Close()
	s.wg.Wait()
}

// Crash stops accepting and drops every connection, as a killed server's
// kernel would.
func (s *Server) Crash() {
	s.ln.Close()
	s.Mu.Lock()
	for nc := range s.open {
		nc.Close()
	}
	s.Mu.Unlock()
	s.wg.Wait()
}

func (s *Server) Addr() string { return s.ln.Addr().String() }

func (s *Server) problem(format string, args ...any) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Problems = append(s.Problems, fmt.Sprintf(format, args...))
}

// Check fails the test with everything the server found wrong.
func (s *Server) Check() {
	s.t.Helper()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, p := range s.Problems {
		s.t.Error("fake server:", p)
	}
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.Mu.Lock()
		s.open[nc] = true
		s.Mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.Mu.Lock()
				delete(s.open, nc)
				s.Mu.Unlock()
				nc.Close()
			}()
			s.serve(nc)
		}()
	}
}

func readFrame(br *bufio.Reader) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(br, lb[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n > 2<<20 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(br, b)
	return b, err
}

func (s *Server) serve(nc net.Conn) {
	nc.SetDeadline(time.Now().Add(time.Minute)) // bound a broken test
	br := bufio.NewReader(nc)
	bw := bufio.NewWriter(nc)
	if first, err := br.Peek(4); err == nil && string(first) == "srvr" {
		s.Mu.Lock()
		srvr := s.Srvr
		s.Mu.Unlock()
		if srvr != nil {
			io.WriteString(nc, srvr())
			return
		}
		io.WriteString(nc, "Zookeeper version: fake\nMode: standalone\n")
		return
	}
	b, err := readFrame(br)
	if err != nil {
		s.problem("handshake: %v", err)
		return
	}
	d := wire.NewDecoder(b)
	proto, zxid, timeout, sid := d.Int(), d.Long(), d.Int(), d.Long()
	passwd := d.Buffer()
	ro := d.Bool()
	s.Mu.Lock()
	resume := s.Resume
	s.Mu.Unlock()
	if d.Err() != nil || d.Remaining() != 0 || proto != 0 || timeout <= 0 || len(passwd) != passwdSize || ro ||
		!resume && (zxid != 0 || sid != 0) {
		s.problem("bad ConnectRequest % x", b)
		return
	}
	s.Mu.Lock()
	s.Sessions++
	id := s.Sessions
	s.Mu.Unlock()
	if sid != 0 {
		id = sid
	}
	var e wire.Encoder
	at := beginFrame(&e)
	e.Int(0)
	e.Int(s.Timeout)
	e.Long(id)
	e.Buffer(make([]byte, passwdSize))
	e.Bool(false)
	endFrame(&e, at)
	bw.Write(e.B)
	bw.Flush()

	var queued [][]byte // replies not yet written, in request order
	flush := func() {
		for _, r := range queued {
			bw.Write(r)
		}
		queued = queued[:0]
		bw.Flush()
	}
	for {
		b, err := readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.problem("read: %v", err)
			}
			return
		}
		if len(b) < 8 {
			s.problem("short request % x", b)
			return
		}
		xid := int32(binary.BigEndian.Uint32(b))
		op := wire.Op(binary.BigEndian.Uint32(b[4:]))
		reply := s.answer(xid, op, b[8:])
		if reply == nil {
			return
		}
		switch {
		case op == wire.OpPing:
			// Out of band, ahead of held replies, as the client expects.
			bw.Write(reply)
			if s.mode == PingGate {
				flush()
			}
			bw.Flush()
			continue
		case op == wire.OpCreate && isRootCreate(b[8:]):
			// Setup before the pipelined run; answered at once.
			queued = append(queued, reply)
			flush()
			continue
		case s.mode == Silent:
			continue
		case op == wire.OpCloseSession:
			queued = append(queued, reply)
			flush()
			return
		}
		queued = append(queued, reply)
		switch s.mode {
		case InOrder:
			if br.Buffered() == 0 {
				flush()
			}
		case Swap:
			if len(queued) == 2 {
				queued[0], queued[1] = queued[1], queued[0]
				flush()
			}
		case Hold:
			if len(queued) == s.window {
				// A client within its window has nothing more to send until
				// it sees a reply.
				nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
				// CloseSession alone may follow: it is sent behind the last
				// requests to learn when they have all been answered.
				if next, err := br.Peek(12); err == nil && wire.Op(binary.BigEndian.Uint32(next[8:])) != wire.OpCloseSession {
					s.problem("client sent more than %d requests without a reply", s.window)
				}
				nc.SetDeadline(time.Now().Add(time.Minute))
				flush()
			}
		}
	}
}

func isRootCreate(body []byte) bool {
	d := wire.NewDecoder(body)
	return d.String() == "/bench" // bench.DefaultRoot
}

// answer decodes one request strictly and returns its reply frame, or nil
// (after recording a problem) when the request is malformed.
func (s *Server) answer(xid int32, op wire.Op, body []byte) []byte {
	d := wire.NewDecoder(body)
	var out wire.Encoder
	at := beginFrame(&out)
	code := wire.CodeOK
	var stat wire.Stat
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.ops[op]++
	var replyBody func()
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
			replyBody = func() { out.String(path) }
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
			replyBody = func() { out.Stat(&stat) }
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
			replyBody = func() { out.Buffer(data); out.Stat(&stat) }
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
		s.Problems = append(s.Problems, fmt.Sprintf("unexpected op %d", op))
		return nil
	}
	if d.Err() != nil || d.Remaining() != 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("op %d: decode error %v, %d bytes left", op, d.Err(), d.Remaining()))
		return nil
	}
	out.Int(xid)
	out.Long(1)
	out.Int(int32(code))
	if code == wire.CodeOK && replyBody != nil {
		replyBody()
	}
	endFrame(&out, at)
	return out.B
}

func (s *Server) Count(op wire.Op) int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.ops[op]
}

// FailEveryTenth fails create of node i when i%10 == 9.
func FailEveryTenth(path string) wire.Code {
	i, err := strconv.Atoi(path[strings.LastIndexByte(path, '-')+1:])
	if err == nil && i%10 == 9 {
		return wire.CodeNodeExists
	}
	return 0
}
