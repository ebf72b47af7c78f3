package harness

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// A partitionable ensemble (EnsembleConfig.Partitionable) has its members
// reach each other through relays: member i's zoo.cfg names, for every
// other member j, a relay port of the ordered pair (i, j) for j's quorum
// port and one for its election port, and the relay forwards what arrives
// there to j's own port. Cut stops the forwarding between two members in
// both directions (CutOneWay in one), as a network that silently drops
// their packets does:
// the connections stay open, bytes already read wait in the relay, and
// the senders' socket buffers fill until their writes block; a new
// connection is accepted (the relay is local) but reaches nothing. Heal
// lets everything held through in order, as TCP retransmission would
// deliver it, unless an endpoint gave up on its connection meanwhile.
// Client ports are not relayed: a test's clients see each member as it
// is.
//
// corral connects to the address in its own configuration and identifies
// a peer by the id it sends, so per-member server lines work. ZooKeeper
// 3.9 does not keep them: its first leader stamps its configuration with a
// version and every follower adopts it, addresses included, so a
// Partitionable ensemble is skipped on the reference (StartEnsemble). A
// run before this was known passed there once and timed out electing in
// the next: member 1 reached member 2 through the first leader's relay.

// Relays are the relays between a group's members and which member pairs
// are cut. StartEnsemble makes them for a Partitionable ensemble; a test
// that writes its members' configurations itself makes them with
// NewRelays.
//
// Locking: mu guards cut, closed and conns; cond (on mu) wakes pumps
// waiting for a heal or for the close.
type Relays struct {
	t         testing.TB
	mu        sync.Mutex
	cond      *sync.Cond
	cut       map[[2]int]bool // (a, b): nothing from member a reaches b (0-based)
	closed    bool
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
}

// NewRelays returns relays that stop when the test ends.
func NewRelays(t testing.TB) *Relays {
	rn := &Relays{t: t, cut: map[[2]int]bool{}, conns: map[net.Conn]struct{}{}}
	rn.cond = sync.NewCond(&rn.mu)
	t.Cleanup(rn.close)
	return rn
}

// Relay listens on a free loopback port for traffic from member from to
// member to (indices the test chooses) and forwards it to target, to's
// own port; it returns the port for from's configuration to name.
func (rn *Relays) Relay(from, to int, target int) int {
	// A port free when testport checked it was once taken before the
	// listen (by what was not found): another port then.
	var ln net.Listener
	var port int
	for try := 0; ; try++ {
		port = freePort(rn.t)
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) || try == 4 {
			rn.t.Fatalf("relay %d->%d: %v", from, to, err)
		}
	}
	rn.mu.Lock()
	rn.listeners = append(rn.listeners, ln)
	rn.mu.Unlock()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(target))
	rn.wg.Add(1)
	go func() {
		defer rn.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return // closed
			}
			rn.wg.Add(1)
			go func() {
				defer rn.wg.Done()
				rn.serve(in, from, to, addr)
			}()
		}
	}()
	return port
}

// serve relays one connection from member from to member to.
func (rn *Relays) serve(in net.Conn, from, to int, addr string) {
	defer in.Close()
	if !rn.track(in) {
		return
	}
	defer rn.untrack(in)
	// A connection is made once both ways are open, as a TCP handshake
	// needs.
	if !rn.wait(from, to) || !rn.wait(to, from) {
		return
	}
	out, err := net.Dial("tcp", addr)
	if err != nil {
		return // the member is down: the connection ends, as a refused one would
	}
	defer out.Close()
	if !rn.track(out) {
		return
	}
	defer rn.untrack(out)
	done := make(chan struct{}, 2)
	go func() { rn.pump(out, in, from, to); done <- struct{}{} }()
	go func() { rn.pump(in, out, to, from); done <- struct{}{} }()
	<-done
	in.Close()
	out.Close()
	<-done
}

// pump copies src (member from's bytes) to dst (member to), holding each
// chunk while from's traffic to to is cut.
func (rn *Relays) pump(dst, src net.Conn, from, to int) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !rn.wait(from, to) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			// A half close, passed on once the pair may talk.
			if rn.wait(from, to) {
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
			}
			return
		}
	}
}

// wait blocks while from's traffic to to is cut; false once the relays
// close.
func (rn *Relays) wait(from, to int) bool {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	for rn.cut[[2]int{from, to}] && !rn.closed {
		rn.cond.Wait()
	}
	return !rn.closed
}

func (rn *Relays) track(c net.Conn) bool {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.closed {
		return false
	}
	rn.conns[c] = struct{}{}
	return true
}

func (rn *Relays) untrack(c net.Conn) {
	rn.mu.Lock()
	delete(rn.conns, c)
	rn.mu.Unlock()
}

// SetCut cuts (or heals) the pair (i, j): nothing crosses between them,
// either way.
func (rn *Relays) SetCut(i, j int, cut bool) {
	rn.setOneWay(i, j, cut)
	rn.setOneWay(j, i, cut)
}

// CutOneWay drops what member from sends to member to, while to's
// traffic to from still flows, until Heal.
func (rn *Relays) CutOneWay(from, to int) { rn.setOneWay(from, to, true) }

func (rn *Relays) setOneWay(from, to int, cut bool) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if cut {
		rn.cut[[2]int{from, to}] = true
	} else {
		delete(rn.cut, [2]int{from, to})
	}
	rn.cond.Broadcast()
}

// Heal heals every pair.
func (rn *Relays) Heal() {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	clear(rn.cut)
	rn.cond.Broadcast()
}

// close stops every relay and waits for their goroutines.
func (rn *Relays) close() {
	rn.mu.Lock()
	rn.closed = true
	for _, ln := range rn.listeners {
		ln.Close()
	}
	for c := range rn.conns {
		c.Close()
	}
	rn.cond.Broadcast()
	rn.mu.Unlock()
	rn.wg.Wait()
}

// Cut stops all traffic between members i and j (0-based), both ways,
// until Heal; see relay.go. The ensemble must be Partitionable.
func (en *Ensemble) Cut(i, j int) {
	en.t.Helper()
	if en.relays == nil {
		en.t.Fatal("harness: Cut on an ensemble that is not Partitionable")
	}
	en.relays.SetCut(i, j, true)
}

// Isolate cuts member i from every other member.
func (en *Ensemble) Isolate(i int) {
	en.t.Helper()
	for j := range en.members {
		if j != i {
			en.Cut(i, j)
		}
	}
}

// CutOneWay drops what member from sends to member to (0-based), while
// to's traffic to from still flows, until Heal.
func (en *Ensemble) CutOneWay(from, to int) {
	en.t.Helper()
	if en.relays == nil {
		en.t.Fatal("harness: CutOneWay on an ensemble that is not Partitionable")
	}
	en.relays.CutOneWay(from, to)
}

// Heal lets every cut pair talk again.
func (en *Ensemble) Heal() {
	en.t.Helper()
	if en.relays == nil {
		en.t.Fatal("harness: Heal on an ensemble that is not Partitionable")
	}
	en.relays.Heal()
}
