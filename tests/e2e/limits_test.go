package e2e

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// TestFrameLimits: a frame longer than jute.maxbuffer closes that one
// connection with no reply; the server keeps serving everyone else
// (PROTOCOL §13).
func TestFrameLimits(t *testing.T) {
	srv := env.Start(t)
	other, _ := connect(t, srv)
	base := root(t, other)

	t.Run("Oversized", func(t *testing.T) {
		r := harness.DialSession(t, srv.Addr(), 30000)
		// Only the length is sent: the server must judge the frame by it.
		hdr := binary.BigEndian.AppendUint32(nil, wire.DefaultMaxBuffer+1)
		if _, err := r.Conn.Write(hdr); err != nil {
			t.Fatal(err)
		}
		if frames := r.ExpectClosed(); len(frames) != 0 {
			t.Errorf("oversized frame got %d frames before the close", len(frames))
		}
		// A negative length likewise.
		r2 := harness.DialSession(t, srv.Addr(), 30000)
		if _, err := r2.Conn.Write([]byte{0xff, 0xff, 0xff, 0xfe}); err != nil {
			t.Fatal(err)
		}
		r2.ExpectClosed()
		// Everyone else is unaffected.
		try(other.Create(base+"/after", []byte("ok"), 0, zk.WorldACL(zk.PermAll))).must(t)
		harness.DialSession(t, srv.Addr(), 30000)
	})

	t.Run("AtTheLimit", func(t *testing.T) {
		r := harness.DialSession(t, srv.Addr(), 30000)
		path := base + "/big"
		r.Create2(path, nil, openACL, 0)
		// A setData frame of exactly jute.maxbuffer bytes is accepted:
		// header 8 + path (4+len) + data (4+n) + version 4.
		n := wire.DefaultMaxBuffer - 8 - (4 + len(path)) - 4 - 4
		data := bytes.Repeat([]byte{'z'}, n)
		var e wire.Encoder
		xid := r.NextXid()
		e.Int(xid)
		e.Int(int32(wire.OpSetData))
		harness.SetDataBody(path, data, -1)(&e)
		if e.Len() != wire.DefaultMaxBuffer {
			t.Fatalf("built a frame of %d bytes", e.Len())
		}
		if err := r.WriteFrame(e.Bytes()); err != nil {
			t.Fatal(err)
		}
		p, _ := r.Await(xid)
		if p.Err != wire.CodeOK {
			t.Fatalf("setData of %d bytes: %v", n, p.Err)
		}
		var st wire.Stat
		d := p.Decoder()
		d.Stat(&st)
		if st.DataLength != int32(n) {
			t.Errorf("dataLength %d, want %d", st.DataLength, n)
		}
	})
}
