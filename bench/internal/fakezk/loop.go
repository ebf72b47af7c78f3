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

// loop is the part of a fake server that does not depend on what it
// stores: it listens on loopback, accepts connections, checks each
// ConnectRequest and grants a session, reads requests frame by frame,
// and writes what answer returns; it collects the problems it finds and
// reports them through the test when the test ends. Tree and YCSB are a
// loop with their own answer.
type loop struct {
	t  *testing.T
	ln net.Listener
	wg sync.WaitGroup

	// mu is the fake's own mutex; it guards problems and *sessions.
	mu       *sync.Mutex
	sessions *int64 // sessions granted so far, numbered from 1
	problems []string

	// answer returns the reply to request (xid, op, body) of session sid,
	// or nil to close the connection without one.
	answer func(sid int64, xid int32, op wire.Op, body []byte) []byte
	// srvr, if not "", answers a four-letter word on a new connection.
	srvr string
	// drop, if set, closes the connection instead of answering.
	drop func(sid int64, op wire.Op) bool
}

// start listens and serves until the test ends.
func (l *loop) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.t, l.ln = t, ln
	l.wg.Add(1)
	go l.accept()
	t.Cleanup(func() {
		ln.Close()
		l.wg.Wait()
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, p := range l.problems {
			t.Error("fake server:", p)
		}
	})
}

func (l *loop) addr() string { return l.ln.Addr().String() }

func (l *loop) problem(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

func (l *loop) accept() {
	defer l.wg.Done()
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer nc.Close()
			l.serve(nc)
		}()
	}
}

func (l *loop) serve(nc net.Conn) {
	nc.SetDeadline(time.Now().Add(time.Minute)) // bound a broken test
	br := bufio.NewReader(nc)
	if l.srvr != "" {
		if word, err := br.Peek(4); err == nil && strings.Trim(string(word), "abcdefghijklmnopqrstuvwxyz") == "" {
			io.WriteString(nc, l.srvr)
			return
		}
	}
	sid, ok := l.handshake(nc, br)
	if !ok {
		return
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
		if _, err := nc.Write(reply); err != nil {
			return
		}
		if op == wire.OpCloseSession {
			return
		}
	}
}

// handshake reads and checks a ConnectRequest and grants the next
// session with the timeout asked for.
func (l *loop) handshake(nc net.Conn, br *bufio.Reader) (int64, bool) {
	b, err := readFrame(br)
	if err != nil {
		l.problem("handshake: %v", err)
		return 0, false
	}
	d := wire.NewDecoder(b)
	d.Int()
	d.Long()
	timeout := d.Int()
	d.Long()
	d.Buffer()
	d.Bool()
	if d.Err() != nil || timeout <= 0 {
		l.problem("bad ConnectRequest % x", b)
		return 0, false
	}
	l.mu.Lock()
	*l.sessions++
	sid := *l.sessions
	l.mu.Unlock()
	var e wire.Encoder
	at := beginFrame(&e)
	e.Int(0)
	e.Int(timeout)
	e.Long(sid)
	e.Buffer(make([]byte, passwdSize))
	e.Bool(false)
	endFrame(&e, at)
	_, err = nc.Write(e.B)
	return sid, err == nil
}
