package client

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// A scripted fake server for the connection machinery: the test goroutine
// accepts connections, reads requests and writes exactly the frames it
// wants, so ordering, reconnects and failures are deterministic.

const fakeWait = 10 * time.Second

type fakeServer struct {
	t     *testing.T
	ln    net.Listener // nil for a pipe fake
	pipe  string       // a pipe fake's address
	conns chan net.Conn

	mu       sync.Mutex
	accepted []net.Conn
}

// closeConns drops every accepted connection, so a client being closed
// does not wait for a closeSession reply the script will never send.
func (f *fakeServer) closeConns() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, nc := range f.accepted {
		nc.Close()
	}
}

// closeClient closes c after dropping the fake's connections.
func (f *fakeServer) closeClient(c *Conn) {
	f.closeConns()
	c.Close()
}

func newFake(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{t: t, ln: ln, conns: make(chan net.Conn, 16)}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				close(f.conns)
				return
			}
			f.conns <- nc
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for nc := range f.conns {
			nc.Close()
		}
	})
	return f
}

// newPipeFake is a fake the client reaches through net.Pipe instead of a
// socket: the client dials it with pipeDialer. A goroutine waiting on a
// pipe is durably blocked, so a pipe fake works inside a synctest bubble
// (a socket does not: the bubble's clock would not move). addr names
// the fake in the client's server list.
func newPipeFake(t *testing.T, addr string) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, pipe: addr, conns: make(chan net.Conn, 16)}
	t.Cleanup(f.closeConns)
	return f
}

// pipeDialer is the Dialer option that reaches pipe fakes by address.
func pipeDialer(fakes ...*fakeServer) Option {
	return Dialer(func(ctx context.Context, _, addr string) (net.Conn, error) {
		for _, f := range fakes {
			if f.pipe != addr {
				continue
			}
			cli, srv := net.Pipe()
			select {
			case f.conns <- srv:
				return cli, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return nil, errors.New("fake: no server at " + addr)
	})
}

func (f *fakeServer) addr() string {
	if f.ln == nil {
		return f.pipe
	}
	return f.ln.Addr().String()
}

// accept waits for a connection and reads its ConnectRequest.
func (f *fakeServer) accept() *fakeConn {
	f.t.Helper()
	select {
	case nc, ok := <-f.conns:
		if !ok {
			f.t.Fatal("fake: listener closed")
		}
		fc := &fakeConn{t: f.t, nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), 0)}
		f.mu.Lock()
		f.accepted = append(f.accepted, nc)
		f.mu.Unlock()
		f.t.Cleanup(func() { nc.Close() })
		p := fc.frame()
		if err := fc.req.Decode(wire.NewDecoder(p)); err != nil {
			f.t.Fatalf("fake: ConnectRequest: %v", err)
		}
		return fc
	case <-time.After(fakeWait):
		f.t.Fatal("fake: no connection")
	}
	return nil
}

type fakeConn struct {
	t   *testing.T
	nc  net.Conn
	fr  *wire.FrameReader
	req wire.ConnectRequest
}

func (fc *fakeConn) frame() []byte {
	fc.t.Helper()
	fc.nc.SetReadDeadline(time.Now().Add(fakeWait))
	p, err := fc.fr.ReadFrame()
	if err != nil {
		fc.t.Fatalf("fake: read: %v", err)
	}
	return append([]byte(nil), p...)
}

func (fc *fakeConn) write(e *wire.Encoder) {
	fc.t.Helper()
	if _, err := fc.nc.Write(e.B); err != nil {
		fc.t.Fatalf("fake: write: %v", err)
	}
}

// handshake answers the ConnectRequest.
func (fc *fakeConn) handshake(sid int64, timeoutMs int32) {
	fc.t.Helper()
	var e wire.Encoder
	s := e.BeginFrame()
	(&wire.ConnectResponse{Timeout: timeoutMs, SessionID: sid, Passwd: []byte("0123456789abcdef"),
		HasReadOnly: fc.req.HasReadOnly}).Encode(&e)
	e.EndFrame(s)
	fc.write(&e)
}

// fakeReq is one request as the fake read it.
type fakeReq struct {
	hdr  wire.RequestHeader
	body []byte
}

func (r fakeReq) decode(t *testing.T, rec wire.Record) {
	t.Helper()
	if err := rec.Decode(wire.NewDecoder(r.body)); err != nil {
		t.Fatalf("fake: decoding op %d: %v", r.hdr.Type, err)
	}
}

// next reads one request, skipping pings unless wantPing.
func (fc *fakeConn) next() fakeReq {
	fc.t.Helper()
	for {
		r := fc.nextAny()
		if r.hdr.Xid != wire.XidPing {
			return r
		}
	}
}

func (fc *fakeConn) nextAny() fakeReq {
	fc.t.Helper()
	p := fc.frame()
	d := wire.NewDecoder(p)
	var h wire.RequestHeader
	if err := h.Decode(d); err != nil {
		fc.t.Fatalf("fake: header: %v", err)
	}
	return fakeReq{hdr: h, body: p[wire.RequestHeaderSize:]}
}

// reply answers xid.
func (fc *fakeConn) reply(xid int32, zxid int64, code wire.Code, body wire.Record) {
	fc.t.Helper()
	var e wire.Encoder
	fc.appendReply(&e, xid, zxid, code, body)
	fc.write(&e)
}

func (fc *fakeConn) appendReply(e *wire.Encoder, xid int32, zxid int64, code wire.Code, body wire.Record) {
	s := e.BeginFrame()
	(&wire.ReplyHeader{Xid: xid, Zxid: zxid, Err: code}).Encode(e)
	if body != nil && code == wire.CodeOK {
		body.Encode(e)
	}
	e.EndFrame(s)
}

func (fc *fakeConn) notify(typ int32, path string, zxid int64) {
	fc.t.Helper()
	fc.reply(wire.XidNotification, zxid, wire.CodeOK,
		&wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: path})
}

// connectFake starts Connect against f, completes the handshake and
// returns both ends.
func connectFake(t *testing.T, f *fakeServer, timeoutMs int32, opts ...Option) (*Conn, *fakeConn) {
	t.Helper()
	type res struct {
		c   *Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
		defer cancel()
		c, err := Connect(ctx, []string{f.addr()}, append([]Option{SessionTimeout(30 * time.Second)}, opts...)...)
		ch <- res{c, err}
	}()
	fc := f.accept()
	fc.handshake(0x1234, timeoutMs)
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { f.closeClient(r.c) })
	return r.c, fc
}

func wantIs(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}
