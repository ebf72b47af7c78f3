package bench

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

// fakeMode selects how the fake server releases replies. Whatever the
// mode, it decodes every request strictly and answers from an in-memory
// tree, so the tests check both the bytes the generator sends and how it
// matches replies.
type fakeMode int

const (
	// inOrder answers each request as it is read.
	inOrder fakeMode = iota
	// hold keeps replies until window requests are unanswered, then checks
	// that the client sends nothing more before answering all of them. A
	// generator that does not pipeline never fills the window (and stalls);
	// one that overruns its window is caught.
	hold
	// swap answers requests in pairs, second one first.
	swap
	// pingGate keeps replies until the client pings.
	pingGate
	// silent never answers a request after the handshake.
	silent
)

type fakeServer struct {
	t       *testing.T
	ln      net.Listener
	mode    fakeMode
	window  int
	timeout int32 // negotiated session timeout, ms
	// failCreate, if set, makes create of path fail with the code it returns.
	failCreate func(path string) wire.Code
	// srvr, if set, answers srvr; resume accepts a handshake that resumes
	// a session (the id is echoed) instead of reporting it as a problem.
	srvr   func() string
	resume bool

	mu        sync.Mutex
	nodes     map[string][]byte
	attempted map[string]bool // every path a create was sent for
	ops       map[wire.Op]int
	pings     int
	sessions  int64
	closed    int // sessions closed with closeSession
	open      map[net.Conn]bool
	problems  []string
	wg        sync.WaitGroup
}

func newFakeServer(t *testing.T, mode fakeMode, window int) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := startFake(ln, mode, window)
	s.t = t
	t.Cleanup(s.stop)
	return s
}

// startFake serves on ln until stop.
func startFake(ln net.Listener, mode fakeMode, window int) *fakeServer {
	s := &fakeServer{
		ln: ln, mode: mode, window: window, timeout: 30000,
		nodes: map[string][]byte{"/": nil}, attempted: map[string]bool{},
		ops: map[wire.Op]int{}, open: map[net.Conn]bool{},
	}
	s.wg.Add(1)
	go s.accept()
	return s
}

func (s *fakeServer) stop() {
	s.ln.Close()
	s.wg.Wait()
}

// crash stops accepting and drops every connection, as a killed server's
// kernel would.
func (s *fakeServer) crash() {
	s.ln.Close()
	s.mu.Lock()
	for nc := range s.open {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// check fails the test with everything the server found wrong.
func (s *fakeServer) check() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.problems {
		s.t.Error("fake server:", p)
	}
}

func (s *fakeServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.open[nc] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.open, nc)
				s.mu.Unlock()
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

func (s *fakeServer) serve(nc net.Conn) {
	nc.SetDeadline(time.Now().Add(time.Minute)) // bound a broken test
	br := bufio.NewReader(nc)
	bw := bufio.NewWriter(nc)
	if first, err := br.Peek(4); err == nil && string(first) == "srvr" {
		s.mu.Lock()
		srvr := s.srvr
		s.mu.Unlock()
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
	s.mu.Lock()
	resume := s.resume
	s.mu.Unlock()
	if d.Err() != nil || d.Remaining() != 0 || proto != 0 || timeout <= 0 || len(passwd) != passwdSize || ro ||
		!resume && (zxid != 0 || sid != 0) {
		s.problem("bad ConnectRequest % x", b)
		return
	}
	s.mu.Lock()
	s.sessions++
	id := s.sessions
	s.mu.Unlock()
	if sid != 0 {
		id = sid
	}
	var e wire.Encoder
	at := beginFrame(&e)
	e.Int(0)
	e.Int(s.timeout)
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
			if s.mode == pingGate {
				flush()
			}
			bw.Flush()
			continue
		case op == wire.OpCreate && isRootCreate(b[8:]):
			// Setup before the pipelined run; answered at once.
			queued = append(queued, reply)
			flush()
			continue
		case s.mode == silent:
			continue
		case op == wire.OpCloseSession:
			queued = append(queued, reply)
			flush()
			return
		}
		queued = append(queued, reply)
		switch s.mode {
		case inOrder:
			if br.Buffered() == 0 {
				flush()
			}
		case swap:
			if len(queued) == 2 {
				queued[0], queued[1] = queued[1], queued[0]
				flush()
			}
		case hold:
			if len(queued) == s.window {
				// A client within its window has nothing more to send until
				// it sees a reply.
				nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
				// closeSession alone may follow: it is sent behind the last
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
	return d.String() == DefaultRoot
}

// answer decodes one request strictly and returns its reply frame, or nil
// (after recording a problem) when the request is malformed.
func (s *fakeServer) answer(xid int32, op wire.Op, body []byte) []byte {
	d := wire.NewDecoder(body)
	var out wire.Encoder
	at := beginFrame(&out)
	code := wire.CodeOK
	var stat wire.Stat
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops[op]++
	var replyBody func()
	switch op {
	case wire.OpCreate:
		path, data, acl, flags := d.String(), d.Buffer(), d.ACLs(), d.Int()
		if len(acl) != 1 || acl[0] != wire.OpenACLUnsafe[0] || flags != wire.ModePersistent || data == nil {
			s.problems = append(s.problems, fmt.Sprintf("bad create %q acl %v flags %d", path, acl, flags))
		}
		s.attempted[path] = true
		switch {
		case s.failCreate != nil && s.failCreate(path) != 0:
			code = s.failCreate(path)
		case s.nodes[path] != nil:
			code = wire.CodeNodeExists
		default:
			s.nodes[path] = data
			replyBody = func() { out.String(path) }
		}
	case wire.OpSetData:
		path, data, version := d.String(), d.Buffer(), d.Int()
		if version != -1 || data == nil {
			s.problems = append(s.problems, fmt.Sprintf("bad setData %q version %d", path, version))
		}
		if !s.attempted[path] {
			s.problems = append(s.problems, fmt.Sprintf("setData of %q, never created", path))
		}
		if s.nodes[path] == nil {
			code = wire.CodeNoNode
		} else {
			s.nodes[path] = data
			stat.DataLength = int32(len(data))
			replyBody = func() { out.Stat(&stat) }
		}
	case wire.OpGetData:
		path, watch := d.String(), d.Bool()
		if watch {
			s.problems = append(s.problems, fmt.Sprintf("getData %q with a watch", path))
		}
		if !s.attempted[path] {
			s.problems = append(s.problems, fmt.Sprintf("getData of %q, never created", path))
		}
		if data := s.nodes[path]; data == nil {
			code = wire.CodeNoNode
		} else {
			stat.DataLength = int32(len(data))
			replyBody = func() { out.Buffer(data); out.Stat(&stat) }
		}
	case wire.OpDelete:
		path, version := d.String(), d.Int()
		if version != -1 {
			s.problems = append(s.problems, fmt.Sprintf("bad delete %q version %d", path, version))
		}
		delete(s.nodes, path)
	case wire.OpPing:
		s.pings++
		if xid != wire.XidPing {
			s.problems = append(s.problems, fmt.Sprintf("ping with xid %d", xid))
		}
	case wire.OpCloseSession:
		s.closed++
	default:
		s.problems = append(s.problems, fmt.Sprintf("unexpected op %d", op))
		return nil
	}
	if d.Err() != nil || d.Remaining() != 0 {
		s.problems = append(s.problems, fmt.Sprintf("op %d: decode error %v, %d bytes left", op, d.Err(), d.Remaining()))
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

func (s *fakeServer) count(op wire.Op) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops[op]
}

// failEveryTenth fails create of node i when i%10 == 9.
func failEveryTenth(path string) wire.Code {
	i, err := strconv.Atoi(path[strings.LastIndexByte(path, '-')+1:])
	if err == nil && i%10 == 9 {
		return wire.CodeNodeExists
	}
	return 0
}
