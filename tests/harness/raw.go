package harness

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// rawTimeout bounds every read of the raw client; nothing in these tests
// legitimately waits longer for one frame.
const rawTimeout = 15 * time.Second

// Raw is a minimal ZooKeeper client speaking frames and jute directly. It
// sends exactly what the test asks, never pings on its own, and exposes
// every frame, so tests can check byte-level behaviour (reply ordering,
// refused handshakes, error bodies) that a full client hides.
type Raw struct {
	t    testing.TB
	Conn net.Conn

	// Set by Connect from the ConnectResponse.
	SessionID int64
	Passwd    []byte
	Timeout   int32
	// LastZxid is the highest zxid seen in a reply header.
	LastZxid int64

	xid int32
}

// ConnectRequest is the handshake record. ReadOnly nil omits the trailing
// boolean, as go-zookeeper does.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        *bool
}

// ConnectResponse is the handshake reply; ReadOnly is nil when the server
// omitted the trailing boolean. FrameLen is the payload length.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        *bool
	FrameLen        int
}

// Packet is one server frame after the handshake.
type Packet struct {
	Xid  int32
	Zxid int64
	Err  wire.Code
	Body []byte
}

// Event is a decoded watch notification.
type Event struct {
	Type  int32
	State int32
	Path  string
	Zxid  int64
}

// Dial opens a TCP connection without a handshake. It is closed when the
// test ends.
func Dial(t testing.TB, addr string) *Raw {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, rawTimeout)
	if err != nil {
		t.Fatalf("raw dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &Raw{t: t, Conn: c}
}

// DialSession dials and creates a new session with the given requested
// timeout (ms), sending the readOnly byte like the Java client.
func DialSession(t testing.TB, addr string, timeoutMs int32) *Raw {
	t.Helper()
	r := Dial(t, addr)
	f := false
	resp, err := r.Connect(ConnectRequest{TimeOut: timeoutMs, Passwd: make([]byte, 16), ReadOnly: &f})
	if err != nil {
		t.Fatalf("raw handshake: %v", err)
	}
	if resp.SessionID == 0 || resp.TimeOut <= 0 {
		t.Fatalf("raw handshake: no session: %+v", resp)
	}
	return r
}

// Connect sends a ConnectRequest and reads the ConnectResponse. It returns
// an error wrapping io.EOF if the server closed the connection instead.
func (r *Raw) Connect(req ConnectRequest) (ConnectResponse, error) {
	var e wire.Encoder
	e.Int(req.ProtocolVersion)
	e.Long(req.LastZxidSeen)
	e.Int(req.TimeOut)
	e.Long(req.SessionID)
	e.Buffer(req.Passwd)
	if req.ReadOnly != nil {
		e.Bool(*req.ReadOnly)
	}
	if err := r.WriteFrame(e.Bytes()); err != nil {
		return ConnectResponse{}, err
	}
	b, err := r.ReadFrame()
	if err != nil {
		return ConnectResponse{}, err
	}
	d := wire.NewDecoder(b)
	resp := ConnectResponse{FrameLen: len(b)}
	resp.ProtocolVersion = d.Int()
	resp.TimeOut = d.Int()
	resp.SessionID = d.Long()
	resp.Passwd = d.Buffer()
	if d.Remaining() > 0 {
		ro := d.Bool()
		resp.ReadOnly = &ro
	}
	if err := d.Err(); err != nil {
		return resp, err
	}
	if d.Remaining() != 0 {
		return resp, fmt.Errorf("connect response: %d trailing bytes", d.Remaining())
	}
	r.SessionID, r.Passwd, r.Timeout = resp.SessionID, resp.Passwd, resp.TimeOut
	return resp, nil
}

// WriteFrame writes one length-prefixed frame.
func (r *Raw) WriteFrame(payload []byte) error {
	buf := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(payload)), uint32(len(payload)))
	buf = append(buf, payload...)
	if err := r.Conn.SetWriteDeadline(time.Now().Add(rawTimeout)); err != nil {
		return err
	}
	_, err := r.Conn.Write(buf)
	return err
}

// ReadFrame reads one length-prefixed frame.
func (r *Raw) ReadFrame() ([]byte, error) {
	if err := r.Conn.SetReadDeadline(time.Now().Add(rawTimeout)); err != nil {
		return nil, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(r.Conn, hdr[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(hdr[:]))
	if n < 0 || n > 16<<20 {
		return nil, fmt.Errorf("raw: frame length %d", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.Conn, b); err != nil {
		return nil, err
	}
	return b, nil
}

// NextXid returns the next ordinary xid (1, 2, ...).
func (r *Raw) NextXid() int32 {
	r.xid++
	return r.xid
}

// Send writes RequestHeader{next xid, op} + body and returns the xid.
func (r *Raw) Send(op wire.Op, body func(*wire.Encoder)) int32 {
	r.t.Helper()
	xid := r.NextXid()
	r.SendXid(xid, op, body)
	return xid
}

// SendXid writes a request with the given xid.
func (r *Raw) SendXid(xid int32, op wire.Op, body func(*wire.Encoder)) {
	r.t.Helper()
	var e wire.Encoder
	e.Int(xid)
	e.Int(int32(op))
	if body != nil {
		body(&e)
	}
	if err := r.WriteFrame(e.Bytes()); err != nil {
		r.t.Fatalf("raw send op %d: %v", op, err)
	}
}

// ReadPacket reads one frame after the handshake and decodes its header.
func (r *Raw) ReadPacket() (Packet, error) {
	b, err := r.ReadFrame()
	if err != nil {
		return Packet{}, err
	}
	if len(b) < 16 {
		return Packet{}, fmt.Errorf("raw: reply of %d bytes, want >= 16", len(b))
	}
	p := Packet{
		Xid:  int32(binary.BigEndian.Uint32(b[0:])),
		Zxid: int64(binary.BigEndian.Uint64(b[4:])),
		Err:  wire.Code(int32(binary.BigEndian.Uint32(b[12:]))),
		Body: b[16:],
	}
	if p.Zxid > r.LastZxid {
		r.LastZxid = p.Zxid
	}
	return p, nil
}

// MustReadPacket is ReadPacket that fails the test on error.
func (r *Raw) MustReadPacket() Packet {
	r.t.Helper()
	p, err := r.ReadPacket()
	if err != nil {
		r.t.Fatalf("raw read: %v", err)
	}
	return p
}

// Decoder returns a decoder over the reply body.
func (p Packet) Decoder() *wire.Decoder { return wire.NewDecoder(p.Body) }

// IsNotification reports whether the frame is a watch event.
func (p Packet) IsNotification() bool { return p.Xid == wire.XidNotification }

// Event decodes a notification body.
func (p Packet) Event() (Event, error) {
	d := p.Decoder()
	ev := Event{Type: d.Int(), State: d.Int(), Path: d.String(), Zxid: p.Zxid}
	return ev, d.Err()
}

// Call sends a request and reads frames until the reply with its xid,
// returning the reply and the notifications that arrived before it.
func (r *Raw) Call(op wire.Op, body func(*wire.Encoder)) (Packet, []Event) {
	r.t.Helper()
	xid := r.Send(op, body)
	return r.Await(xid)
}

// Await reads frames until the reply to xid, collecting notifications.
// Pings are skipped; any other reply is a test failure (replies must come
// in request order, so a foreign xid means a protocol violation).
func (r *Raw) Await(xid int32) (Packet, []Event) {
	r.t.Helper()
	var evs []Event
	for {
		p, err := r.ReadPacket()
		if err != nil {
			r.t.Fatalf("raw: waiting for reply xid %d: %v", xid, err)
		}
		switch {
		case p.IsNotification():
			ev, err := p.Event()
			if err != nil {
				r.t.Fatalf("raw: bad notification: %v", err)
			}
			evs = append(evs, ev)
		case p.Xid == wire.XidPing && xid != wire.XidPing:
		case p.Xid == xid:
			return p, evs
		default:
			r.t.Fatalf("raw: got reply xid %d (err %d) while waiting for xid %d", p.Xid, p.Err, xid)
		}
	}
}

// ExpectClosed reads until the server closes the connection, failing the
// test if it does not within the raw timeout. It returns the frames that
// arrived before the close.
func (r *Raw) ExpectClosed() [][]byte {
	r.t.Helper()
	var frames [][]byte
	for {
		b, err := r.ReadFrame()
		if err == nil {
			frames = append(frames, b)
			continue
		}
		if IsClosed(err) {
			return frames
		}
		r.t.Fatalf("raw: expected the server to close the connection, got %v", err)
	}
}

// IsClosed reports whether err means the peer closed the connection (EOF
// or reset), as opposed to a timeout.
func IsClosed(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// Close closes the TCP connection without closing the session.
func (r *Raw) Close() { r.Conn.Close() }
