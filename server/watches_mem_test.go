package server

import (
	"flag"
	"fmt"
	"runtime"
	"testing"

	"github.com/corral-db/corral/wire"
)

var memFull = flag.Bool("mem", false, "TestWatchMemory: 1,000,000 watches across 10,000 connections")

func liveHeapNow() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestWatchMemory reports the heap the watch manager costs per watch for
// 1,000,000 data watches across 10,000 connections (a hundredth without
// -mem), 100 per connection, on 100,000 paths (10 connections each) and
// on 1,000,000 (one each); every registration brings its own path
// string, as each request decodes one. Then it checks that a trigger and
// closing the connections leave nothing behind.
func TestWatchMemory(t *testing.T) {
	for _, paths := range []int{100_000, 1_000_000} {
		conns, perConn := 10_000, 100
		if !*memFull {
			conns, paths = conns/100, paths/100
		}
		t.Run(fmt.Sprintf("paths=%d", paths), func(t *testing.T) { watchMemory(t, conns, perConn, paths) })
	}
}

func watchMemory(t *testing.T, conns, perConn, paths int) {
	cs := make([]*conn, conns)
	for i := range cs {
		cs[i] = &conn{id: uint64(i)}
	}
	path := func(p int) string { return fmt.Sprintf("/app/%d/node-%07d", p/1000, p) }
	before := liveHeapNow()
	w := newWatchManager()
	for i, c := range cs {
		for j := range perConn {
			// A fresh string per registration, as each request's is.
			w.addData(path((i*perConn+j)%paths), c)
		}
	}
	after := liveHeapNow()
	total := conns * perConn
	if got := w.count(); got != total {
		t.Fatalf("count %d, want %d", got, total)
	}
	t.Logf("%d watches on %d paths across %d connections: %.1f heap bytes/watch",
		total, paths, conns, float64(int64(after)-int64(before))/float64(total))

	// A trigger consumes the path's standard watches.
	f := newFired()
	w.trigger(wire.EventNodeCreated, path(0), f)
	if len(f.data) != total/paths {
		t.Fatalf("trigger fired %d connections, want %d", len(f.data), total/paths)
	}
	if got := w.count(); got != total-total/paths {
		t.Fatalf("count after trigger %d, want %d", got, total-total/paths)
	}
	for _, c := range cs {
		w.removeConn(c)
	}
	if n := w.count(); n != 0 || len(w.byConn) != 0 || len(w.data.paths) != 0 {
		t.Fatalf("after closing every connection: %d watches, %d conns, %d paths", n, len(w.byConn), len(w.data.paths))
	}
	runtime.KeepAlive(w)
}
