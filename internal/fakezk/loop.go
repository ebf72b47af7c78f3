package fakezk

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// Mode selects how a fake server releases replies. Whatever the mode, it
// decodes every request strictly and answers from its in-memory state, so
// the tests check both the bytes a client sends and how it matches
// replies.
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

// loop is the one connection loop of every fake server here: it listens
// on loopback, accepts connections, answers four-letter words, checks
// each ConnectRequest strictly and grants a session, reads requests frame
// by frame, and releases what answer returns as the Mode says. It
// collects the problems it finds. Server, Tree and YCSB are a loop with
// their own handler.
type loop struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mode   Mode
	window int // Hold: replies kept until this many are unanswered

	// handle answers each request (see handler and answer).
	handle handler
	// drop, if set, closes the connection instead of answering.
	drop func(sid int64, op wire.Op) bool
	// srvr, if set, answers a four-letter word on a new connection; it is
	// called with mu not held.
	srvr func() string

	// mu is the fake's own mutex (the embedding type's exported Mu); it
	// guards everything below and the embedding type's state, and is held
	// when timeout and resume are called.
	mu       *sync.Mutex
	sessions *int64    // sessions granted so far, numbered from 1
	problems *[]string // what the fake found wrong
	open     map[net.Conn]bool
	ops      map[wire.Op]int // requests received, by op
	// timeout, if set, is the session timeout granted for the one asked;
	// otherwise the one asked is granted.
	timeout func(asked int32) int32
	// resume, if set and true, accepts a handshake that resumes a session
	// (its id is echoed) instead of reporting it as a problem.
	resume func() bool
}

// listen listens on loopback and serves until the test ends; with report
// the problems found fail the test then.
func (l *loop) listen(t *testing.T, report bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.serveOn(ln)
	t.Cleanup(func() {
		l.stop()
		if !report {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, p := range *l.problems {
			t.Error("fake server:", p)
		}
	})
}

// serveOn serves on ln until stop.
func (l *loop) serveOn(ln net.Listener) {
	l.ln = ln
	l.open = map[net.Conn]bool{}
	l.wg.Add(1)
	go l.accept()
}

// stop closes the listener and waits for every connection to end.
func (l *loop) stop() {
	l.ln.Close()
	l.wg.Wait()
}

// crash stops accepting and drops every connection, as a killed server's
// kernel would.
func (l *loop) crash() {
	l.ln.Close()
	l.mu.Lock()
	for nc := range l.open {
		nc.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *loop) addr() string { return l.ln.Addr().String() }

func (l *loop) problem(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problemLocked(format, args...)
}

func (l *loop) problemLocked(format string, args ...any) {
	*l.problems = append(*l.problems, fmt.Sprintf(format, args...))
}

func (l *loop) accept() {
	defer l.wg.Done()
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		l.open[nc] = true
		l.mu.Unlock()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() {
				l.mu.Lock()
				delete(l.open, nc)
				l.mu.Unlock()
				nc.Close()
			}()
			l.serve(nc)
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

func (l *loop) serve(nc net.Conn) {
	nc.SetDeadline(time.Now().Add(time.Minute)) // bound a broken test
	br := bufio.NewReader(nc)
	bw := bufio.NewWriter(nc)
	if srvr := l.srvr; srvr != nil {
		if word, err := br.Peek(4); err == nil && strings.Trim(string(word), "abcdefghijklmnopqrstuvwxyz") == "" {
			io.WriteString(nc, srvr())
			return
		}
	}
	sid, ok := l.handshake(br, bw)
	if !ok {
		return
	}

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
				l.problem("read: %v", err)
			}
			return
		}
		if len(b) < 8 {
			l.problem("short request % x", b)
			return
		}
		xid := int32(binary.BigEndian.Uint32(b))
		op := wire.Op(binary.BigEndian.Uint32(b[4:]))
		if l.drop != nil && l.drop(sid, op) {
			return // dies without answering
		}
		reply := l.answer(sid, xid, op, b[8:])
		if reply == nil {
			return
		}
		switch {
		case op == wire.OpPing:
			// Out of band, ahead of held replies, as the client expects.
			bw.Write(reply)
			if l.mode == PingGate {
				flush()
			}
			bw.Flush()
			continue
		case op == wire.OpCreate && isRootCreate(b[8:]):
			// Setup before the pipelined run; answered at once.
			queued = append(queued, reply)
			flush()
			continue
		case l.mode == Silent:
			continue
		case op == wire.OpCloseSession:
			queued = append(queued, reply)
			flush()
			return
		}
		queued = append(queued, reply)
		switch l.mode {
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
			if len(queued) == l.window {
				// A client within its window has nothing more to send until
				// it sees a reply.
				nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
				// CloseSession alone may follow: it is sent behind the last
				// requests to learn when they have all been answered.
				if next, err := br.Peek(12); err == nil && wire.Op(binary.BigEndian.Uint32(next[8:])) != wire.OpCloseSession {
					l.problem("client sent more than %d requests without a reply", l.window)
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

// handshake reads and checks a ConnectRequest strictly and grants the
// next session (or the resumed one).
func (l *loop) handshake(br *bufio.Reader, bw *bufio.Writer) (int64, bool) {
	b, err := readFrame(br)
	if err != nil {
		l.problem("handshake: %v", err)
		return 0, false
	}
	d := wire.NewDecoder(b)
	proto, zxid, timeout, sid := d.Int(), d.Long(), d.Int(), d.Long()
	passwd := d.Buffer()
	ro := d.Bool()
	l.mu.Lock()
	resume := l.resume != nil && l.resume()
	if d.Err() != nil || d.Remaining() != 0 || proto != 0 || timeout <= 0 || len(passwd) != passwdSize || ro ||
		!resume && (zxid != 0 || sid != 0) {
		l.problemLocked("bad ConnectRequest % x", b)
		l.mu.Unlock()
		return 0, false
	}
	*l.sessions++
	id := *l.sessions
	if sid != 0 {
		id = sid
	}
	if l.timeout != nil {
		timeout = l.timeout(timeout)
	}
	l.mu.Unlock()
	var e wire.Encoder
	at := beginFrame(&e)
	e.Int(0)
	e.Int(timeout)
	e.Long(id)
	e.Buffer(make([]byte, passwdSize))
	e.Bool(false)
	endFrame(&e, at)
	bw.Write(e.B)
	return id, bw.Flush() == nil
}
