package zab

// Ready is the work a node asks of its driver. The driver handles one
// Ready at a time, in this order, then calls Advance:
//
//  1. Snapshot: install it (state machine and log replaced), durably.
//  2. Truncate: drop every log entry after *Truncate, durably.
//  3. Entries: append them to the log; they need not be durable yet. When
//     they are (fsync in sync mode, write in async mode, at once in
//     diskless mode), call Persisted.
//  4. HardState: write it durably.
//  5. Messages: send them, only after HardState is durable. A message
//     with a Snapshot carries the snapshot's bytes; the driver may attach
//     them now.
//  6. Committed: apply them to the state machine, in order.
//
// The driver may call Step, Tick, Propose and Persisted between Ready and
// Advance; HasReady stays false until Advance.
type Ready struct {
	// SoftState is set when the role, phase, leader, epoch or recovering
	// flag changed.
	SoftState *SoftState
	// HardState is set when the epochs changed.
	HardState *HardState
	Snapshot  *Snapshot
	Truncate  *Zxid
	Entries   []Entry
	Committed []Entry
	Messages  []Message
}

// Empty reports whether the Ready asks for nothing.
func (rd Ready) Empty() bool {
	return rd.SoftState == nil && rd.HardState == nil && rd.Snapshot == nil && rd.Truncate == nil &&
		len(rd.Entries) == 0 && len(rd.Committed) == 0 && len(rd.Messages) == 0
}

// HasReady reports whether Ready would return work.
func (n *Node) HasReady() bool {
	if n.inflight {
		return false
	}
	return n.softState() != n.prevSoft || n.hs != n.prevHS || len(n.msgs) > 0 ||
		n.log.hasUnstable() || n.commit > n.applying
}

// Ready returns the pending work and marks it in flight until Advance. It
// returns an empty Ready while another is in flight (an empty Ready needs
// no Advance).
func (n *Node) Ready() Ready {
	if n.inflight {
		return Ready{}
	}
	var rd Ready
	if ss := n.softState(); ss != n.prevSoft {
		// A copy made here: &ss would move ss to the heap on every
		// call, two allocations per write on a group of one.
		changed := ss
		rd.SoftState = &changed
		n.prevSoft = ss
	}
	if n.hs != n.prevHS {
		hs := n.hs
		rd.HardState = &hs
		n.prevHS = hs
	}
	rd.Snapshot, rd.Truncate, rd.Entries = n.log.takeUnstable()
	if n.commit > n.applying {
		ents, err := n.log.entries(n.applying, n.commit, n.cfg.MaxBatchBytes)
		if err != nil {
			// The entries stay pending; a driver that compacted unapplied
			// entries broke its contract, so say so loudly.
			n.logger.Error("zab: cannot read committed entries", "after", n.applying, "commit", n.commit, "err", err)
		} else if len(ents) > 0 {
			rd.Committed = ents
			n.applying = ents[len(ents)-1].Zxid
		}
	}
	rd.Messages = n.msgs
	n.msgs = nil
	n.mergeable = n.mergeable[:0]
	clear(n.lastMsg)
	// An empty Ready needs no Advance: a driver that skips it must not
	// stall the node.
	n.inflight = !rd.Empty()
	return rd
}

// Advance tells the node that the driver has done what rd asked.
func (n *Node) Advance(rd Ready) {
	if !n.inflight {
		return
	}
	n.inflight = false
	n.log.advance()
	if k := len(rd.Committed); k > 0 {
		n.applied = max(n.applied, rd.Committed[k-1].Zxid)
	}
	if rd.Snapshot != nil {
		n.applied = max(n.applied, rd.Snapshot.Zxid)
		n.snapshotInstalled()
	}
}

// TakeMessages returns the messages waiting to be sent, and forgets them,
// when nothing else needs the driver first: no Ready in flight, no epoch
// change to persist, no log change to make. A driver calls it right after
// Persisted to send the acknowledgements (or, on a leader, the commits)
// it caused without a round trip through its Ready loop; it must send
// them before anything it takes from the node later. Otherwise it returns
// nil and the messages come with the next Ready.
func (n *Node) TakeMessages() []Message {
	if n.inflight || n.hs != n.prevHS || n.log.hasUnstable() || len(n.msgs) == 0 {
		return nil
	}
	msgs := n.msgs
	n.msgs = nil
	n.mergeable = n.mergeable[:0]
	clear(n.lastMsg)
	return msgs
}

// RecycleMessages gives back a Messages slice (from Ready or
// TakeMessages) that the driver has sent and no longer refers to; the
// node queues later messages in its array instead of growing a new one
// after every Ready. Only the slice is reused: the Entries and Snapshot
// the messages pointed to are the transport's until written, and the
// node never writes to them. A driver whose transport keeps the slice
// itself must not call it.
func (n *Node) RecycleMessages(msgs []Message) {
	if n.msgs != nil || cap(msgs) == 0 || cap(msgs) > maxRecycledMsgs {
		return
	}
	// Past its length the array is zero already: new arrays are, and
	// only a prefix cleared here was ever used since.
	clear(msgs)
	n.msgs = msgs[:0]
}

// maxRecycledMsgs bounds the array RecycleMessages keeps: a burst's
// (a leader's first heartbeat round to many learners, a long DIFF) is
// let go.
const maxRecycledMsgs = 1024
