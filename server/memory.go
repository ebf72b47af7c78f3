package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// A SNAP replaces the whole tree: the old one, and the snapshot's bytes it
// was decoded from, become garbage the size of the tree; on the leader
// that sent it, the snapshot file read into memory does. The collector
// frees them at its next cycle, which internal/gcpace puts half the live
// heap (at least 64 MiB) of allocation away, and the runtime keeps the
// freed pages resident
// (it returns memory above the heap goal, and the goal is far above).
// A member that has just installed a 500k-node tree was left 200-300 MB
// larger than one restarted from its own snapshot (Fig. 5.4's trials), and
// size is what a SIGKILL costs before the peers notice: the kernel closes
// a killed process's sockets only after freeing its memory (~0.07 ms per
// MB here).
//
// The leader that sent one was as large: a member restarted at 500k
// znodes that then sent a SNAP was killed at 547 MB, against ~300 MB for
// the members that had not.
//
// So after installing a leader's snapshot, and on a leader once every
// learner it sent one to has synchronized (the bytes are written by
// then), the server runs one collection and returns the free pages to
// the OS (debug.FreeOSMemory), in the background: a one-off cost of one
// mark of the tree, at a moment a member is joining.
//
// releasing is process-wide, as the heap and FreeOSMemory are: one
// release at a time whichever server (tests run several in a process)
// asks.
var releasing atomic.Bool

// releaseMemory starts returning the free heap to the OS, unless a
// release is already running; why is for the log. Stopping the server
// waits for it (one collection).
func (s *Server) releaseMemory(why string) {
	s.releasesAsked.Add(1)
	if !releasing.CompareAndSwap(false, true) {
		return
	}
	log := s.log
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer releasing.Store(false)
		start := time.Now()
		before := retainedHeap()
		debug.FreeOSMemory()
		log.Info("returned free memory to the OS", "after", why, "retainedBefore", before>>20, "retainedAfter", retainedHeap()>>20,
			"unit", "MiB", "took", time.Since(start))
	}()
}

// liveHeap is the heap the last collection found live (0 before the
// first).
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// retainedHeap is the heap memory the runtime holds from the OS.
func retainedHeap() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapSys - ms.HeapReleased
}
