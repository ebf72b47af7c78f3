package transport

import "github.com/corral-db/corral/zab"

// lane is a class of messages with its own port, connections and queues.
// Votes travel apart from the rest so that an election is never stuck
// behind a snapshot or a long DIFF, as in ZooKeeper, whose election and
// quorum traffic use separate ports.
type lane uint8

const (
	laneElection lane = 1
	laneQuorum   lane = 2
)

var lanes = [...]lane{laneElection, laneQuorum}

func (l lane) String() string {
	switch l {
	case laneElection:
		return "election"
	case laneQuorum:
		return "quorum"
	}
	return "lane?"
}

func (l lane) valid() bool { return l == laneElection || l == laneQuorum }

// laneOf is the lane a message type travels on.
func laneOf(t zab.MsgType) lane {
	if t == zab.MsgVote {
		return laneElection
	}
	return laneQuorum
}

// queued is a message waiting for its connection's writer, with its
// encoded size.
type queued struct {
	m    zab.Message
	size int
	// oversized: admitted into an empty queue although larger than the
	// byte bound; its bytes do not count against the messages after it.
	oversized bool
}

// queue is a bounded FIFO of messages for one peer and lane, bounded in
// messages and in encoded bytes. It is not safe for concurrent use (the
// lane's mutex guards it).
//
// A full queue either refuses the newest message (tail drop: quorum
// traffic, where the receiver detects the gap and resynchronizes) or
// evicts the oldest (election traffic: a newer vote supersedes an older
// one, as ZooKeeper's one-slot election send queues do).
type queue struct {
	msgs       []queued
	bytes      int64
	oversize   int64 // bytes of the oversized messages queued
	maxMsgs    int
	maxBytes   int64
	dropOldest bool
}

// push adds m. It reports whether m was queued and how many older
// messages it evicted. A message larger than maxBytes is accepted into an
// empty queue, so that a large snapshot can still be sent, and does not
// count against the messages queued behind it: a SNAP is followed at once
// by NEWLEADER, and refusing that (the receiver does not notice a lost
// NEWLEADER) stalled the follower's synchronization until initLimit.
func (q *queue) push(m zab.Message, size int) (ok bool, evicted int) {
	fits := func() bool {
		return len(q.msgs) == 0 ||
			(len(q.msgs) < q.maxMsgs && q.bytes-q.oversize+int64(size) <= q.maxBytes)
	}
	if q.dropOldest {
		for !fits() {
			q.drop()
			evicted++
		}
	} else if !fits() {
		return false, 0
	}
	e := queued{m: m, size: size, oversized: len(q.msgs) == 0 && int64(size) > q.maxBytes}
	q.msgs = append(q.msgs, e)
	q.bytes += int64(size)
	if e.oversized {
		q.oversize += int64(size)
	}
	return true, evicted
}

// drop evicts the oldest message.
func (q *queue) drop() {
	e := q.msgs[0]
	q.bytes -= int64(e.size)
	if e.oversized {
		q.oversize -= int64(e.size)
	}
	q.msgs[0] = queued{}
	q.msgs = q.msgs[1:]
}

// take removes and returns every queued message. spare, if not nil, is a
// batch an earlier take returned whose messages have all been sent and
// zeroed (the link writer zeroes each as it is written, to let its bytes
// go): it becomes the queue's backing array, so that a writer and the
// queue pass two arrays back and forth instead of the queue growing a new
// one after every take (the growth was a tenth of a leader's allocated
// bytes under a create load). Past its length such an array is zero
// already (a new array is, and only the zeroed prefix was ever used), so
// take clears nothing. A spare grown past maxSpare by a burst is let go.
func (q *queue) take(spare []queued) []queued {
	b := q.msgs
	if cap(spare) > maxSpare {
		spare = nil
	}
	q.msgs, q.bytes, q.oversize = spare[:0], 0, 0
	return b
}

// maxSpare is the largest batch array take keeps for reuse.
const maxSpare = 4096

func (q *queue) len() int { return len(q.msgs) }
