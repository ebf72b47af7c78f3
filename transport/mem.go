package transport

import (
	"cmp"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/corral-db/corral/zab"
)

// Any matches every server in the Network's per-link controls (server ids
// are never 0).
const Any uint64 = 0

// NetworkConfig configures an in-memory Network.
type NetworkConfig struct {
	// Rand decides the random drops of SetDrop. Nil means a source with a
	// fixed seed, so a run is repeatable.
	Rand *rand.Rand
	// RecvBuffer is the capacity of each endpoint's Recv channel; a
	// message that finds it full is dropped (DroppedFull). Default 4096.
	RecvBuffer int
	// Codec makes every message go through the binary codec, as it would
	// over TCP: the receiver gets its own copy of the bytes, and codec
	// bugs show up in tests that use the in-memory network.
	Codec bool
	// Logger receives drops of messages the codec refuses; nil discards.
	Logger *slog.Logger
}

// Network is an in-memory network of Endpoints for tests and
// simulator-style runs of real servers: FIFO per directed pair, with
// partitions, isolation, random drops, delays and held links.
//
// It is deterministic where it can be: without delays a message is
// delivered (or dropped) inside Send, so the order of each Recv channel is
// a function of the order of the Send calls, and random drops draw from
// the seeded Rand in that same order. Held links release inside Release.
// Delays (SetDelay) use real time, delivered by one goroutine that stops
// with Close; they keep each link FIFO.
//
// A message in flight (delayed or held) is dropped if, when it is due,
// its link is partitioned or either end has closed: like a broken TCP
// connection, and never delivered to a later incarnation of its recipient.
type Network struct {
	cfg NetworkConfig
	log *slog.Logger

	mu       sync.Mutex
	rand     *rand.Rand
	eps      map[uint64]*Endpoint
	cut      map[[2]uint64]bool
	isolated map[uint64]bool
	drop     map[[2]uint64]float64
	delay    map[[2]uint64]time.Duration
	held     map[[2]uint64]bool
	links    map[[2]uint64][]pending
	closed   bool
	running  bool // the delayer goroutine

	wake chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
}

type pending struct {
	m   zab.Message
	due time.Time
}

// NewNetwork returns an empty network.
func NewNetwork(cfg NetworkConfig) *Network {
	setDefault(&cfg.RecvBuffer, 4096)
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 0x6e6574))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Network{
		cfg:      cfg,
		log:      cfg.Logger,
		rand:     cfg.Rand,
		eps:      map[uint64]*Endpoint{},
		cut:      map[[2]uint64]bool{},
		isolated: map[uint64]bool{},
		drop:     map[[2]uint64]float64{},
		delay:    map[[2]uint64]time.Duration{},
		held:     map[[2]uint64]bool{},
		links:    map[[2]uint64][]pending{},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
	}
}

// Join attaches server id to the network. A server that closed its
// endpoint (crashed) may join again; messages in flight to its earlier
// incarnation are not delivered to the new one.
func (nw *Network) Join(id uint64) (*Endpoint, error) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	switch {
	case nw.closed:
		return nil, ErrClosed
	case id == Any:
		return nil, fmt.Errorf("%w: server id 0", ErrInvalidConfig)
	case nw.eps[id] != nil:
		return nil, fmt.Errorf("%w: server %d already joined", ErrInvalidConfig, id)
	}
	ep := &Endpoint{nw: nw, id: id, recv: make(chan zab.Message, nw.cfg.RecvBuffer), peers: map[uint64]*PeerStats{}}
	nw.eps[id] = ep
	return ep, nil
}

// Partition cuts the link between a and b in both directions.
func (nw *Network) Partition(a, b uint64) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.cut[[2]uint64{a, b}] = true
	nw.cut[[2]uint64{b, a}] = true
}

// Isolate cuts server id off from every other.
func (nw *Network) Isolate(id uint64) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.isolated[id] = true
}

// Heal removes every partition and isolation (drops, delays and holds
// stay as set).
func (nw *Network) Heal() {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	clear(nw.cut)
	clear(nw.isolated)
}

// SetDrop makes the link from -> to drop each message with probability
// p (0 removes the rule). Either end may be Any; where several rules
// match, the highest probability applies.
func (nw *Network) SetDrop(from, to uint64, p float64) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if p <= 0 {
		delete(nw.drop, [2]uint64{from, to})
	} else {
		nw.drop[[2]uint64{from, to}] = p
	}
}

// SetDelay delays messages on the link from -> to by d (0 removes the
// rule); either end may be Any, and the longest matching delay applies.
// Messages stay in order on each link.
func (nw *Network) SetDelay(from, to uint64, d time.Duration) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if d <= 0 {
		delete(nw.delay, [2]uint64{from, to})
	} else {
		nw.delay[[2]uint64{from, to}] = d
	}
}

// Hold stops delivery on the link from -> to (either may be Any):
// messages queue, in order, until Release.
func (nw *Network) Hold(from, to uint64) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.held[[2]uint64{from, to}] = true
}

// Release undoes Hold(from, to) and delivers, before returning, the held
// messages that are due and no longer held by another rule.
func (nw *Network) Release(from, to uint64) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	delete(nw.held, [2]uint64{from, to})
	nw.flushLocked(time.Now())
	nw.wakeLocked()
}

// Close closes every endpoint and stops the delay goroutine.
func (nw *Network) Close() {
	nw.mu.Lock()
	if nw.closed {
		nw.mu.Unlock()
		return
	}
	nw.closed = true
	for _, ep := range nw.eps {
		ep.closeLocked()
	}
	close(nw.stop)
	nw.mu.Unlock()
	nw.wg.Wait()
}

// match returns the matching rule values for from -> to, exact or with
// wildcards.
func match[V cmp.Ordered](rules map[[2]uint64]V, from, to uint64) V {
	var best V
	for _, k := range [...][2]uint64{{from, to}, {from, Any}, {Any, to}, {Any, Any}} {
		if v, ok := rules[k]; ok && v > best {
			best = v
		}
	}
	return best
}

func (nw *Network) reachableLocked(from, to uint64) bool {
	return !nw.isolated[from] && !nw.isolated[to] && !nw.cut[[2]uint64{from, to}]
}

func (nw *Network) heldLocked(from, to uint64) bool {
	for _, k := range [...][2]uint64{{from, to}, {from, Any}, {Any, to}, {Any, Any}} {
		if nw.held[k] {
			return true
		}
	}
	return false
}

// sendLocked routes one message from ep.
func (nw *Network) sendLocked(ep *Endpoint, m zab.Message) {
	to := nw.eps[m.To]
	if m.To == ep.id || m.To == Any || m.From != ep.id {
		ep.droppedUnknown++
		return
	}
	st := ep.peerLocked(m.To)
	if to == nil || !nw.reachableLocked(ep.id, m.To) {
		st.DroppedDown++
		return
	}
	if p := match(nw.drop, ep.id, m.To); p > 0 && nw.rand.Float64() < p {
		st.DroppedDown++
		return
	}
	if nw.cfg.Codec {
		var err error
		if m, err = DecodeMessage(AppendMessage(nil, m)); err != nil {
			nw.log.Error("transport: codec refused a message", "msg", m.String(), "err", err)
			st.DroppedTooLarge++
			return
		}
	}
	key := [2]uint64{ep.id, m.To}
	q := nw.links[key]
	d := match(nw.delay, ep.id, m.To)
	if d == 0 && len(q) == 0 && !nw.heldLocked(ep.id, m.To) {
		nw.deliverLocked(ep, to, m)
		return
	}
	due := time.Now().Add(d)
	if k := len(q); k > 0 && due.Before(q[k-1].due) {
		due = q[k-1].due // FIFO: never overtake the message ahead
	}
	nw.links[key] = append(q, pending{m: m, due: due})
	if !nw.running {
		nw.running = true
		nw.wg.Add(1)
		go nw.delayer()
	}
	nw.wakeLocked()
}

func (nw *Network) deliverLocked(from, to *Endpoint, m zab.Message) {
	st := from.peerLocked(to.id)
	select {
	case to.recv <- m:
		st.Sent++
		to.peerLocked(from.id).Received++
	default:
		st.DroppedFull++
	}
}

// flushLocked delivers every due message of every link that is not held,
// in link order, and returns the earliest due time left (zero if none).
func (nw *Network) flushLocked(now time.Time) time.Time {
	keys := make([][2]uint64, 0, len(nw.links))
	for k := range nw.links {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]uint64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	var next time.Time
	for _, k := range keys {
		if nw.heldLocked(k[0], k[1]) {
			continue
		}
		q := nw.links[k]
		for len(q) > 0 && !q[0].due.After(now) {
			from, to := nw.eps[k[0]], nw.eps[k[1]]
			if from != nil && to != nil && nw.reachableLocked(k[0], k[1]) {
				nw.deliverLocked(from, to, q[0].m)
			} else if from != nil {
				from.peerLocked(k[1]).DroppedDown++
			}
			q[0] = pending{}
			q = q[1:]
		}
		if len(q) == 0 {
			delete(nw.links, k)
			continue
		}
		nw.links[k] = q
		if next.IsZero() || q[0].due.Before(next) {
			next = q[0].due
		}
	}
	return next
}

func (nw *Network) wakeLocked() {
	select {
	case nw.wake <- struct{}{}:
	default:
	}
}

// delayer delivers delayed messages when they are due.
func (nw *Network) delayer() {
	defer nw.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		nw.mu.Lock()
		now := time.Now()
		next := nw.flushLocked(now)
		nw.mu.Unlock()
		wait := time.Hour // only a wake-up or stop ends it
		if !next.IsZero() {
			wait = next.Sub(now)
		}
		timer.Reset(wait)
		select {
		case <-nw.stop:
			return
		case <-nw.wake:
		case <-timer.C:
		}
	}
}

// Endpoint is one server's attachment to a Network; it implements
// Transport.
type Endpoint struct {
	nw   *Network
	id   uint64
	recv chan zab.Message

	// Guarded by nw.mu.
	closed         bool
	peers          map[uint64]*PeerStats
	droppedUnknown uint64
}

var _ Transport = (*Endpoint)(nil)

// ID returns the endpoint's server id.
func (ep *Endpoint) ID() uint64 { return ep.id }

// Send implements Transport.
func (ep *Endpoint) Send(msgs []zab.Message) {
	nw := ep.nw
	nw.mu.Lock()
	defer nw.mu.Unlock()
	for i := range msgs {
		if ep.closed {
			ep.droppedUnknown++
			continue
		}
		nw.sendLocked(ep, msgs[i])
	}
}

// Recv implements Transport.
func (ep *Endpoint) Recv() <-chan zab.Message { return ep.recv }

// Close implements Transport: the endpoint leaves the network, as a
// crashed server would; messages in flight to or from it are lost.
func (ep *Endpoint) Close() error {
	ep.nw.mu.Lock()
	defer ep.nw.mu.Unlock()
	ep.closeLocked()
	return nil
}

func (ep *Endpoint) closeLocked() {
	if ep.closed {
		return
	}
	ep.closed = true
	close(ep.recv)
	nw := ep.nw
	if nw.eps[ep.id] == ep {
		delete(nw.eps, ep.id)
	}
	for k, q := range nw.links {
		if k[0] == ep.id || k[1] == ep.id {
			if from := nw.eps[k[0]]; from != nil {
				from.peerLocked(k[1]).DroppedDown += uint64(len(q))
			} else if k[0] == ep.id {
				ep.peerLocked(k[1]).DroppedDown += uint64(len(q))
			}
			delete(nw.links, k)
		}
	}
}

// Stats implements Transport. Peers are the servers this endpoint has
// sent to or received from.
func (ep *Endpoint) Stats() Stats {
	nw := ep.nw
	nw.mu.Lock()
	defer nw.mu.Unlock()
	s := Stats{DroppedUnknown: ep.droppedUnknown}
	for _, st := range ep.peers {
		ps := *st
		ps.Connected = !ep.closed && nw.eps[ps.ID] != nil &&
			nw.reachableLocked(ep.id, ps.ID) && nw.reachableLocked(ps.ID, ep.id)
		s.Peers = append(s.Peers, ps)
	}
	slices.SortFunc(s.Peers, func(a, b PeerStats) int { return cmp.Compare(a.ID, b.ID) })
	return s
}

func (ep *Endpoint) peerLocked(id uint64) *PeerStats {
	st := ep.peers[id]
	if st == nil {
		st = &PeerStats{ID: id}
		ep.peers[id] = st
	}
	return st
}
