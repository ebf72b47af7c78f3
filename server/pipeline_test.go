package server

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wire"
)

// slowSyncFS makes every file's Sync take a while, as a disk's does, so
// that writes arrive while one is being synced and go through the log
// goroutine's groups; on the in-memory file system a sync is instant and
// nearly every write would find the pipeline empty.
type slowSyncFS struct{ vfs.FS }

func (f slowSyncFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return slowSyncFile{file}, nil
}

func (f slowSyncFS) Create(name string) (vfs.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (f slowSyncFS) Open(name string) (vfs.File, error) { return f.OpenFile(name, os.O_RDONLY, 0) }

type slowSyncFile struct{ vfs.File }

func (f slowSyncFile) Sync() error {
	time.Sleep(300 * time.Microsecond)
	return f.File.Sync()
}

// seqAck is one acknowledged sequential create.
type seqAck struct {
	zxid int64
	path string
}

// TestWritesRunToCompletionKeepZxidOrder mixes writes that run to
// completion on their reader (a client with one request at a time, often
// alone in the pipeline) with writes that go through the log goroutine's
// groups (a client with many in flight), all creating sequential children
// of one parent. The sequence number a create gets is the parent's child
// count when it is applied, so if every acknowledged create's suffix
// rises with its zxid, the tree applied in zxid order; after a restart
// (recovery replays the log) each node must still carry its zxid, so the
// log holds them in that order too.
func TestWritesRunToCompletionKeepZxidOrder(t *testing.T) {
	o := Options{FS: slowSyncFS{vfs.NewMem()}, DataDir: "/data", SnapCount: 1 << 20, PreallocSize: 1 << 20}
	ts := startServer(t, o)
	setup := dial(t, ts.addr)
	if _, code := setup.create("/q", nil, 0); code != 0 {
		t.Fatal(code)
	}

	const (
		serial    = 4   // clients with one create at a time
		perSerial = 150 // creates each
		batches   = 20  // pipelined client: batches of ...
		perBatch  = 16  // ... creates sent together
	)
	var (
		mu   sync.Mutex
		acks []seqAck
		wg   sync.WaitGroup
	)
	record := func(a []seqAck) {
		mu.Lock()
		acks = append(acks, a...)
		mu.Unlock()
	}
	inlineBefore, handedBefore := ts.stats.inlineWrites.Load(), ts.stats.handedWrites.Load()
	clients := make([]*tclient, serial+1)
	for i := range clients {
		clients[i] = dial(t, ts.addr)
	}
	errs := make(chan error, serial+1)
	for i := 0; i < serial; i++ {
		wg.Add(1)
		go func(c *tclient) {
			defer wg.Done()
			var mine []seqAck
			for k := 0; k < perSerial; k++ {
				h, d := c.call(wire.OpCreate, &wire.CreateRequest{Path: "/q/n-", ACL: wire.OpenACLUnsafe, Flags: 2})
				var r wire.CreateResponse
				if h.Err != 0 || r.Decode(d) != nil {
					errs <- fmt.Errorf("create: err %d", h.Err)
					return
				}
				if len(mine) > 0 && h.Zxid <= mine[len(mine)-1].zxid {
					errs <- fmt.Errorf("reply zxid %#x after %#x on one connection", h.Zxid, mine[len(mine)-1].zxid)
					return
				}
				mine = append(mine, seqAck{h.Zxid, r.Path})
			}
			record(mine)
		}(clients[i])
	}
	wg.Add(1)
	go func(c *tclient) {
		defer wg.Done()
		var mine []seqAck
		xid := int32(1000)
		for b := 0; b < batches; b++ {
			var e wire.Encoder
			for k := 0; k < perBatch; k++ {
				start := len(e.B)
				e.Int(0)
				xid++
				(&wire.RequestHeader{Xid: xid, Type: wire.OpCreate}).Encode(&e)
				(&wire.CreateRequest{Path: "/q/p-", ACL: wire.OpenACLUnsafe, Flags: 2}).Encode(&e)
				binary.BigEndian.PutUint32(e.B[start:], uint32(len(e.B)-start-4))
			}
			if _, err := c.nc.Write(e.B); err != nil {
				errs <- err
				return
			}
			for k := 0; k < perBatch; k++ {
				d := wire.NewDecoder(c.read())
				var h wire.ReplyHeader
				var r wire.CreateResponse
				if h.Decode(d) != nil || h.Err != 0 || r.Decode(d) != nil {
					errs <- fmt.Errorf("pipelined create: err %d", h.Err)
					return
				}
				mine = append(mine, seqAck{h.Zxid, r.Path})
			}
		}
		record(mine)
	}(clients[serial])
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Both paths must have been taken, or the test checks only one.
	inline, handed := ts.stats.inlineWrites.Load()-inlineBefore, ts.stats.handedWrites.Load()-handedBefore
	if inline == 0 || handed == 0 {
		t.Fatalf("%d writes applied on a submitting reader, %d by the apply goroutine; the test needs both paths", inline, handed)
	}
	t.Logf("%d writes applied on a submitting reader, %d by the apply goroutine", inline, handed)

	slices.SortFunc(acks, func(a, b seqAck) int { return int(a.zxid - b.zxid) })
	seq := func(p string) int {
		n, err := strconv.Atoi(p[strings.LastIndexByte(p, '-')+1:])
		if err != nil {
			t.Fatalf("path %q: %v", p, err)
		}
		return n
	}
	for i := 1; i < len(acks); i++ {
		if acks[i].zxid == acks[i-1].zxid {
			t.Fatalf("two creates acknowledged with zxid %#x", acks[i].zxid)
		}
		if seq(acks[i].path) <= seq(acks[i-1].path) {
			t.Fatalf("%s (zxid %#x) applied before %s (zxid %#x)", acks[i].path, acks[i].zxid, acks[i-1].path, acks[i-1].zxid)
		}
	}

	ts.stop(t)
	ts = startServer(t, o)
	c := dial(t, ts.addr)
	for _, a := range acks {
		h, d := c.call(wire.OpExists, &wire.PathWatchRequest{Path: a.path})
		var st wire.StatResponse
		if h.Err != 0 || st.Decode(d) != nil {
			t.Fatalf("after restart: exists %s: err %d", a.path, h.Err)
		}
		if st.Stat.Czxid != a.zxid {
			t.Fatalf("after restart: %s has czxid %#x, acknowledged with %#x", a.path, st.Stat.Czxid, a.zxid)
		}
	}
}
