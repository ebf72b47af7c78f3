package kvserver

import "sync"

// lostLinks forwards the transport's report that the quorum connection
// with a peer ended (transport.TCPConfig.OnDisconnect) to the drivers of
// the replicas sharing that transport (replica.Driver.ReportUnreachable).
// A follower whose leader's process died then looks for a new leader at
// once, as ZooKeeper's does when its socket to the leader closes, instead
// of waiting out syncLimit × tickTime. The transport is opened before the
// drivers exist, so they register later.
type lostLinks struct {
	mu  sync.Mutex
	fns []func(peer uint64) // guarded by mu
}

// add registers f to be told of every lost link from now on.
func (l *lostLinks) add(f func(peer uint64)) {
	l.mu.Lock()
	l.fns = append(l.fns, f)
	l.mu.Unlock()
}

// report tells every registered driver that the link to peer ended. It
// is the transport's OnDisconnect: it does not wait for anything but the
// drivers' own locks.
func (l *lostLinks) report(peer uint64) {
	l.mu.Lock()
	fns := l.fns
	l.mu.Unlock()
	for _, f := range fns {
		f(peer)
	}
}
