package load

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/corral-db/corral/wire"
)

// Conn is one client session on one TCP connection. Between Dial and Run it
// is used synchronously (roundTrip, Call); Run turns it into a pipelined writer
// and reader pair and ends the session.
type Conn struct {
	NetConn   net.Conn
	Reader    *bufio.Reader
	Timeout   time.Duration // negotiated session timeout
	SessionID int64
	xid       int32
	frame     []byte // reusable reply body buffer for roundTrip
	// enc is the request buffer exchange reuses.
	enc wire.Encoder
	// callDeadline is the deadline call left set on nc (zero: none);
	// roundTrip and handshake clear it with the deadline they set.
	callDeadline time.Time
}

// readBufSize is large enough that a window of 1 KiB getData replies is
// read with few syscalls.
const readBufSize = 64 << 10

// Dial connects to addr and establishes a new session asking for timeout.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &Conn{NetConn: nc, Reader: bufio.NewReaderSize(nc, readBufSize)}
	if err := c.handshake(ctx, timeout); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return c, nil
}

func (c *Conn) handshake(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(10 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.NetConn.SetDeadline(deadline)
	defer c.clearDeadline()
	var e wire.Encoder
	appendConnect(&e, int32(timeout/time.Millisecond))
	if _, err := c.NetConn.Write(e.B); err != nil {
		return err
	}
	body, err := c.ReadFrame()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	r, err := decodeConnectResponse(body)
	if err != nil {
		return err
	}
	c.Timeout = time.Duration(r.TimeoutMs) * time.Millisecond
	c.SessionID = r.SessionID
	return nil
}

// ReadFrame reads one length-prefixed frame into c.frame.
func (c *Conn) ReadFrame() ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(c.Reader, lb[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(lb[:])))
	if n < 0 || n > MaxReplyFrame {
		return nil, fmt.Errorf("%w: length %d", ErrBadFrame, n)
	}
	if cap(c.frame) < n {
		c.frame = make([]byte, n)
	}
	c.frame = c.frame[:n]
	if _, err := io.ReadFull(c.Reader, c.frame); err != nil {
		return nil, err
	}
	return c.frame, nil
}

// NextXid returns the next request xid; xids stay positive.
func (c *Conn) NextXid() int32 {
	c.xid++
	if c.xid <= 0 {
		c.xid = 1
	}
	return c.xid
}

// roundTrip sends one request built by build and waits for its reply,
// returning the reply header and body (valid until the next call). It is for
// setup outside the measured phases.
func (c *Conn) roundTrip(ctx context.Context, build func(e *wire.Encoder, xid int32)) (replyHeader, []byte, error) {
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.NetConn.SetDeadline(deadline)
	defer c.clearDeadline()
	return c.exchange(build)
}

// clearDeadline removes the connection's deadline.
func (c *Conn) clearDeadline() {
	c.NetConn.SetDeadline(time.Time{})
	c.callDeadline = time.Time{}
}

// exchange sends one request built by build and reads until its reply,
// under whatever deadline the caller set.
func (c *Conn) exchange(build func(e *wire.Encoder, xid int32)) (replyHeader, []byte, error) {
	xid := c.NextXid()
	c.enc.Reset()
	build(&c.enc, xid)
	if _, err := c.NetConn.Write(c.enc.B); err != nil {
		return replyHeader{}, nil, err
	}
	for {
		body, err := c.ReadFrame()
		if err != nil {
			return replyHeader{}, nil, err
		}
		if len(body) < ReplyHeaderSize {
			return replyHeader{}, nil, fmt.Errorf("%w: %d-byte reply", ErrBadFrame, len(body))
		}
		h := DecodeReplyHeader(body)
		switch {
		case h.Xid == wire.XidNotification || h.Xid == wire.XidPing:
			continue
		case h.Xid != xid:
			return h, nil, fmt.Errorf("%w: got %d, want %d", ErrXidMismatch, h.Xid, xid)
		}
		return h, body[ReplyHeaderSize:], nil
	}
}

// EnsureNode creates path with empty data, accepting NodeExists.
func (c *Conn) EnsureNode(ctx context.Context, path string) error {
	h, _, err := c.roundTrip(ctx, func(e *wire.Encoder, xid int32) {
		AppendCreate(e, xid, []byte(path), []byte{})
	})
	if err != nil {
		return err
	}
	if code := wire.Code(h.Err); code != 0 && code != wire.CodeNodeExists {
		return fmt.Errorf("create %s: %w", path, code)
	}
	return nil
}

// CloseSession ends the session and closes the socket.
func (c *Conn) CloseSession(ctx context.Context) error {
	_, _, err := c.roundTrip(ctx, func(e *wire.Encoder, xid int32) {
		appendCloseSession(e, xid)
	})
	c.NetConn.Close()
	return err
}

func (c *Conn) Close() error { return c.NetConn.Close() }
