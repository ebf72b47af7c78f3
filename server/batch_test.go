package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// frames encodes requests back to back, as a client with many in flight
// sends them; xids count up from xid.
type frames struct {
	e   wire.Encoder
	xid int32
}

func (f *frames) add(op wire.Op, body wire.Record) {
	start := len(f.e.B)
	f.e.Int(0)
	f.xid++
	(&wire.RequestHeader{Xid: f.xid, Type: op}).Encode(&f.e)
	body.Encode(&f.e)
	binary.BigEndian.PutUint32(f.e.B[start:], uint32(len(f.e.B)-start-4))
}

// readFrame reads one reply frame, for goroutines other than the test's
// own (tclient.read fails the test, which only the test's goroutine may).
func readFrame(nc net.Conn) ([]byte, error) {
	nc.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang becomes a failure
	var h [4]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(h[:]))
	_, err := io.ReadFull(nc, b)
	return b, err
}

// TestBatchedWritesKeepConnectionOrder: writes that reach the server in one
// burst are decided together (conn.batch) and must still take zxids, and
// sequential suffixes, in the order they were sent, with each reply in
// order and a read after them seeing all of them.
func TestBatchedWritesKeepConnectionOrder(t *testing.T) {
	// One burst of requests and then only reads: allow the session to
	// outlast a loaded machine (see TestBatchesDoNotHoldTheLastSlots).
	ts := startServer(t, Options{MaxSessionTimeout: time.Minute})
	c := dial(t, ts.addr)
	if _, code := c.create("/q", nil, 0); code != 0 {
		t.Fatal(code)
	}
	const n = 700 // more than maxConnBatch, so a burst makes several batches
	f := frames{xid: 100}
	for i := range n {
		f.add(wire.OpCreate, &wire.CreateRequest{Path: "/q/n-", Data: []byte(fmt.Sprint(i)), ACL: wire.OpenACLUnsafe, Flags: wire.ModePersistentSequential})
	}
	f.add(wire.OpGetChildren, &wire.PathWatchRequest{Path: "/q"})
	go c.nc.Write(f.e.B)
	var last int64
	for i := range n {
		d := wire.NewDecoder(c.read())
		var h wire.ReplyHeader
		h.Decode(d)
		if want := int32(101 + i); h.Xid != want || h.Err != 0 {
			t.Fatalf("reply xid %d err %d, want xid %d err 0", h.Xid, h.Err, want)
		}
		if h.Zxid <= last {
			t.Fatalf("reply %d: zxid %#x not above the previous %#x", i, h.Zxid, last)
		}
		last = h.Zxid
		var r wire.CreateResponse
		r.Decode(d)
		if want := fmt.Sprintf("/q/n-%010d", i); r.Path != want {
			t.Fatalf("create %d made %s, want %s", i, r.Path, want)
		}
	}
	d := wire.NewDecoder(c.read())
	var h wire.ReplyHeader
	h.Decode(d)
	var g wire.GetChildrenResponse
	g.Decode(d)
	if h.Xid != int32(101+n) || len(g.Children) != n {
		t.Fatalf("getChildren (xid %d) saw %d children, want xid %d and %d", h.Xid, len(g.Children), 101+n, n)
	}
	for i := range n {
		data, code := c.get(fmt.Sprintf("/q/n-%010d", i))
		if code != 0 || string(data) != fmt.Sprint(i) {
			t.Fatalf("/q/n-%010d holds %q (code %d), want %q", i, data, code, fmt.Sprint(i))
		}
	}
}

// TestBatchesDoNotHoldTheLastSlots: with a pipeline of a few slots and
// several connections each sending a burst of writes, a reader that
// cannot get a slot submits what it has batched before it waits, so no
// reader waits for slots that batched, unsubmitted writes hold.
func TestBatchesDoNotHoldTheLastSlots(t *testing.T) {
	// Every request goes out at the start and the setup connection idles
	// until the end: on a loaded machine that can outlast the test
	// server's default maximum session timeout (20 ticks of 200 ms), and
	// an expired session would close the connections mid-test.
	ts := startServer(t, Options{GlobalOutstandingLimit: 4, MaxSessionTimeout: time.Minute})
	setup := dial(t, ts.addr)
	const conns, writes = 6, 300
	for k := range conns {
		if _, code := setup.create(fmt.Sprintf("/c%d", k), nil, 0); code != 0 {
			t.Fatal(code)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for k := range conns {
		c := dial(t, ts.addr)
		f := frames{}
		for i := range writes {
			f.add(wire.OpSetData, &wire.SetDataRequest{Path: fmt.Sprintf("/c%d", k), Data: []byte(fmt.Sprint(i)), Version: int32(i)})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			go c.nc.Write(f.e.B)
			for i := range writes {
				frame, err := readFrame(c.nc)
				if err != nil {
					errs <- fmt.Errorf("conn %d reply %d: %w", k, i, err)
					return
				}
				var h wire.ReplyHeader
				h.Decode(wire.NewDecoder(frame))
				if h.Xid != int32(i+1) || h.Err != 0 {
					errs <- fmt.Errorf("conn %d reply %d: xid %d err %d", k, i, h.Xid, h.Err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for k := range conns {
		h, d := setup.call(wire.OpExists, &wire.PathWatchRequest{Path: fmt.Sprintf("/c%d", k)})
		var st wire.StatResponse
		st.Decode(d)
		if h.Err != 0 || st.Stat.Version != writes {
			t.Errorf("/c%d version %d (err %d), want %d", k, st.Stat.Version, h.Err, writes)
		}
	}
}
