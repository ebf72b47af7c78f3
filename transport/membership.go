package transport

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Membership changes (ZooKeeper's dynamic reconfiguration): the peers of
// a TCP transport are those of NewTCP until SetPeers replaces them with
// the servers of a new configuration, and, with AcceptUnknown, a server
// outside them that dials in (a server joining the ensemble, which knows
// the members from its own configuration before they know it, or one a
// configuration removed) becomes a peer known by its connections alone
// until a configuration names it.
//
// The higher id dials; a lower id would never reach a server that does
// not know it. So with AcceptUnknown a server also dials its higher-id
// peers whenever it has no connection with them (reverseDialLoop): a
// peer that knows it refuses (statusWrongDirection, it dials itself) and
// the dialer tries again later; one that does not know it accepts.

// peer returns the link of id, nil if id is not a peer.
func (t *TCP) peer(id uint64) *peerLink {
	t.peersMu.RLock()
	defer t.peersMu.RUnlock()
	return t.peers[id]
}

// addPeerLocked registers a peer (peersMu held, or NewTCP).
func (t *TCP) addPeerLocked(id uint64, addr Peer) *peerLink {
	p := &peerLink{id: id, addr: addr, lanes: map[lane]*laneLink{}}
	p.ctx, p.cancel = context.WithCancel(t.ctx)
	for _, l := range lanes {
		ll := &laneLink{
			t:      t,
			peer:   id,
			lane:   l,
			log:    t.log.With("peer", id, "lane", l.String()),
			notify: make(chan struct{}, 1),
		}
		if l == laneElection {
			ll.q = queue{maxMsgs: t.cfg.MaxElectionQueue, maxBytes: int64(t.cfg.MaxFrameBytes), dropOldest: true}
		} else {
			ll.q = queue{maxMsgs: t.cfg.MaxQueueMessages, maxBytes: t.cfg.MaxQueueBytes}
		}
		p.lanes[l] = ll
	}
	t.peers[id] = p
	i, _ := slices.BinarySearch(t.ids, id)
	t.ids = slices.Insert(t.ids, i, id)
	return p
}

// dials reports whether this server dials p, a lower-id peer: it knows
// its address.
func (t *TCP) dials(p *peerLink) bool {
	t.peersMu.RLock()
	defer t.peersMu.RUnlock()
	return p.addr != (Peer{})
}

// startDialsLocked starts the dial loops of a peer whose address is
// known: a lower id's, and with AcceptUnknown a higher id's reverse dial.
func (t *TCP) startDialsLocked(p *peerLink) {
	if p.addr.QuorumAddr == "" || p.addr.ElectionAddr == "" || p.dialing {
		return
	}
	switch {
	case p.id < t.cfg.ID:
		for _, l := range lanes {
			t.wg.Add(1)
			go t.dialLoop(p, p.lanes[l])
		}
	case t.cfg.AcceptUnknown:
		for _, l := range lanes {
			t.wg.Add(1)
			go t.reverseDialLoop(p, p.lanes[l])
		}
	default:
		return
	}
	p.dialing = true
}

// reverseDialLoop dials a higher-id peer while this server has no
// connection with it on ll's lane (see the comment at the top).
func (t *TCP) reverseDialLoop(p *peerLink, ll *laneLink) {
	defer t.wg.Done()
	addr := p.addr.QuorumAddr
	if ll.lane == laneElection {
		addr = p.addr.ElectionAddr
	}
	for t.ctx.Err() == nil && p.ctx.Err() == nil {
		ll.mu.Lock()
		live := ll.cur != nil
		ll.mu.Unlock()
		if !live {
			if c, err := t.dial(p.ctx, ll, addr); err == nil {
				ll.serve(c)
				t.untrack(c)
				continue
			} else if t.ctx.Err() == nil && p.ctx.Err() == nil {
				ll.log.Debug("transport: reverse dial", "addr", addr, "err", err)
			}
		}
		if !t.sleepPeer(p, t.jitter(t.cfg.BackoffMax)) {
			return
		}
	}
}

// quietError is a refusal that is part of the protocol (a reverse dial
// before the other side connected): logged at debug level.
type quietError struct{ error }

func (e *quietError) Unwrap() error { return e.error }

// acceptPeer registers an unknown higher-id server that dialed in
// (AcceptUnknown); it is known by its connections only.
func (t *TCP) acceptPeer(id uint64) *peerLink {
	t.peersMu.Lock()
	defer t.peersMu.Unlock()
	if p := t.peers[id]; p != nil {
		return p
	}
	if t.ctx.Err() != nil {
		return nil
	}
	t.log.Info("transport: accepting a server outside the configuration", "peer", id)
	return t.addPeerLocked(id, Peer{})
}

// SetPeers makes peers (this server's entry, if present, is ignored) the
// servers of the ensemble: new ones are connected, the addresses of known
// ones updated, and those left out disconnected and forgotten (with
// AcceptUnknown, one that dials again is accepted again). A peer whose
// address changed is reconnected.
func (t *TCP) SetPeers(peers map[uint64]Peer) error {
	for id, p := range peers {
		if id == 0 {
			return fmt.Errorf("%w: peer id 0", ErrInvalidConfig)
		}
		if id != t.cfg.ID && (p.QuorumAddr == "" || p.ElectionAddr == "") {
			return fmt.Errorf("%w: peer %d lacks an address", ErrInvalidConfig, id)
		}
	}
	t.peersMu.Lock()
	defer t.peersMu.Unlock()
	if t.ctx.Err() != nil {
		return ErrClosed
	}
	var drop []uint64
	for _, id := range t.ids {
		np, keep := peers[id]
		p := t.peers[id]
		switch {
		case !keep:
			drop = append(drop, id)
		case p.addr == (Peer{}):
			// Known by its connections so far: now we dial it too.
			p.addr = np
			t.startDialsLocked(p)
		case p.addr != np:
			drop = append(drop, id) // re-added below with the new address
		}
	}
	for _, id := range drop {
		t.removePeerLocked(id)
	}
	for id, addr := range peers {
		if id == t.cfg.ID || t.peers[id] != nil {
			continue
		}
		t.log.Info("transport: new peer", "peer", id, "quorum", addr.QuorumAddr, "election", addr.ElectionAddr)
		t.startDialsLocked(t.addPeerLocked(id, addr))
	}
	return nil
}

// removePeerLocked stops the dial loops of a peer and closes its
// connections.
func (t *TCP) removePeerLocked(id uint64) {
	p := t.peers[id]
	p.cancel()
	delete(t.peers, id)
	if i, ok := slices.BinarySearch(t.ids, id); ok {
		t.ids = slices.Delete(t.ids, i, i+1)
	}
	t.log.Info("transport: peer removed", "peer", id)
	t.connsMu.Lock()
	for c := range t.conns {
		if c.peer == id {
			c.close(ErrPeerRemoved)
		}
	}
	t.connsMu.Unlock()
}

// sleepPeer waits d or until the transport closes or p is removed; it
// reports whether to go on.
func (t *TCP) sleepPeer(p *peerLink, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}
