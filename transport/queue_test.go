package transport

import (
	"testing"

	"github.com/corral-db/corral/zab"
)

// TestQueueOversizedDoesNotBlockFollowers: a snapshot larger than the byte
// bound is accepted into an empty queue, and the NEWLEADER behind it still
// fits; ordinary messages are still refused once the bound is reached.
func TestQueueOversizedDoesNotBlockFollowers(t *testing.T) {
	q := queue{maxMsgs: 10, maxBytes: 100}
	if ok, _ := q.push(zab.Message{Type: zab.MsgSync}, 500); !ok {
		t.Fatal("oversized message refused by an empty queue")
	}
	if ok, _ := q.push(zab.Message{Type: zab.MsgNewLeader}, 10); !ok {
		t.Fatal("NEWLEADER refused behind an oversized SNAP")
	}
	if ok, _ := q.push(zab.Message{Type: zab.MsgProposal}, 80); !ok {
		t.Fatal("a proposal within the bound (besides the oversized message) was refused")
	}
	if ok, _ := q.push(zab.Message{Type: zab.MsgProposal}, 20); ok {
		t.Fatal("a proposal past the byte bound was queued")
	}
	if got := len(q.take(nil)); got != 3 {
		t.Fatalf("took %d messages, want 3", got)
	}
	if q.bytes != 0 || q.oversize != 0 {
		t.Fatalf("after take: bytes %d, oversize %d", q.bytes, q.oversize)
	}
	// A large message is oversized only when it is alone: behind another
	// message it is refused.
	q.push(zab.Message{Type: zab.MsgProposal}, 10)
	if ok, _ := q.push(zab.Message{Type: zab.MsgSync}, 500); ok {
		t.Fatal("an oversized message was queued behind another")
	}
}

// TestQueueDropOldestAccountsOversized: evicting an oversized message
// gives its bytes back.
func TestQueueDropOldestAccountsOversized(t *testing.T) {
	q := queue{maxMsgs: 2, maxBytes: 100, dropOldest: true}
	q.push(zab.Message{Type: zab.MsgVote}, 500)
	q.push(zab.Message{Type: zab.MsgVote}, 10)
	if _, evicted := q.push(zab.Message{Type: zab.MsgVote}, 10); evicted != 1 {
		t.Fatalf("evicted %d, want 1 (the count bound)", evicted)
	}
	if q.bytes != 20 || q.oversize != 0 {
		t.Fatalf("bytes %d, oversize %d after evicting the oversized vote; want 20, 0", q.bytes, q.oversize)
	}
}

// TestQueueTakeReusesSpare: a sent (zeroed) batch handed back to take
// becomes the queue's backing array, and the batch take returns is the
// one queued before, unchanged by the pushes that follow into the spare.
func TestQueueTakeReusesSpare(t *testing.T) {
	q := queue{maxMsgs: 100, maxBytes: 1 << 20}
	for i := 1; i <= 3; i++ {
		q.push(zab.Message{Type: zab.MsgProposal, Zxid: zab.Zxid(i)}, 10)
	}
	first := q.take(nil)
	clear(first) // as the link writer does, message by message
	q.push(zab.Message{Type: zab.MsgCommit, Zxid: 4}, 10)
	second := q.take(first)
	if len(second) != 1 || second[0].m.Zxid != 4 {
		t.Fatalf("second batch %+v, want the commit of zxid 4", second)
	}
	if len(q.msgs) != 0 || cap(q.msgs) != cap(first) || &q.msgs[:1][0] != &first[:1][0] {
		t.Fatal("the spare batch is not the queue's backing array")
	}
	q.push(zab.Message{Type: zab.MsgProposal, Zxid: 5}, 10)
	if second[0].m.Zxid != 4 {
		t.Fatal("a push after take changed the batch take returned")
	}
	// A spare grown past maxSpare is not kept.
	big := make([]queued, 0, maxSpare+1)
	q.take(nil)
	q.take(big)
	if cap(q.msgs) == cap(big) {
		t.Fatal("a spare larger than maxSpare was kept")
	}
}
