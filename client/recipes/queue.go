package recipes

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// Queue is the message queue of the diskless-ZooKeeper thesis (§5.3.1.5):
// a producer creates each message as a persistent sequential node
// dir/item-<GUID>-<seq>, so the server numbers messages in the order they
// arrive; a consumer lists dir, and reads and deletes the items in
// increasing sequence order.
//
// Deleting is claiming: of all consumers that try to delete an item,
// exactly one succeeds, and only that one receives it. The delete runs in
// a multi with the creation of a claim node dir/claims/<item>~<consumer>
// holding the item's data; Take returns the item, and Ack deletes the
// claim node once the consumer is done with it:
//
//	Put
//	1 multi(create(dir + "/item-<GUID>-", data, PERSISTENT|SEQUENTIAL),
//	        create(dir + "/puts/<GUID>", EPHEMERAL)); then delete the marker
//	Take
//	1 first Take of a Queue: return this consumer's claim nodes, oldest first
//	2 C = items of getChildren(dir, watch=true); if C is empty, wait for the watch
//	3 for each item i of C in sequence order:
//	4   d = getData(i)
//	5   if multi(delete(i), create(claims/i~me, d)) succeeds, return i
//	6 goto 2
//	Ack
//	1 delete(claims/i~me)
//
// Connection loss: a producer's multi also creates an ephemeral marker
// dir/puts/<GUID>, which says after a lost reply whether the item went in
// (finding the item itself is not enough: a consumer may have taken it
// already). A consumer whose multi's reply was lost looks for its claim
// node: there, the claim ran; absent with the item gone, another consumer
// has it; the item still there, it tries again. If it cannot find out
// (the context ended, the session expired), the next Take of this Queue,
// or of its successor, returns the item if the claim ran.
//
// Delivery: every item is deleted exactly once, by the claim that gives
// it to exactly one consumer. The claim node is persistent and named
// after the consumer, so nothing is lost when a consumer's session ends:
// a Queue created with the same consumer ID (one at a time per ID)
// returns the items its predecessor claimed but did not Ack. So an item
// reaches the application once, or again after an Ack that returned an
// error (the item's Name tells a repeat). An item is never lost.
//
// Order: items are claimed in sequence order. A consumer tries item k only
// after it saw every lower item gone (claimed) or absent from a listing
// that showed k (so claimed already: a lower sequence was created
// earlier). Each consumer therefore receives items in increasing order,
// and with one producer the queue is FIFO.
type Queue struct {
	c   *client.Conn
	dir string
	id  string
	o   *options

	mu        sync.Mutex      // guards the fields below
	recovered bool            // this consumer's claim nodes have been listed
	pending   []string        // claims listed and still to be returned
	out       map[string]bool // items returned and not acknowledged yet
}

const (
	itemPrefix = "item-"
	claimSep   = "~"
)

// Item is a message taken from a Queue.
type Item struct {
	Name string // the item's node name: unique, a repeat has the same
	Seq  int64  // its sequence number: the queue's order
	Data []byte
}

// NewQueue returns the queue kept under dir, consumed (Take) as
// consumerID. Give the same ID to the Queue that replaces one whose
// session ended, so that it returns what the old one had not
// acknowledged. "" picks a random ID (claims it strands stay visible
// under dir/claims). An ID must not contain "/" or "~".
func NewQueue(c *client.Conn, dir, consumerID string, opts ...Option) *Queue {
	if consumerID == "" {
		consumerID = newGUID()
	}
	return &Queue{c: c, dir: dir, id: consumerID, o: buildOptions(opts), out: map[string]bool{}}
}

func (q *Queue) claimsDir() string { return join(q.dir, "claims") }
func (q *Queue) claimPath(item string) string {
	return join(q.claimsDir(), item+claimSep+q.id)
}

// Put appends data and returns the item's node name. If Put fails with
// ctx's error, or the session's end, the item may or may not have been
// enqueued; a connection loss is resolved before Put returns (the name
// is then "" in the rare case that a consumer took the item first).
func (q *Queue) Put(ctx context.Context, data []byte) (string, error) {
	c := q.c
	guid := newGUID()
	prefix := itemPrefix + guid + "-"
	marker := join(q.putsDir(), guid)
	var b backoff
	noNodes := 0
	for {
		if err := ctx.Err(); err != nil {
			return "", err // nothing sent in this round: not enqueued by it
		}
		// Waited for even if ctx ends: Put returns only once it knows
		// whether the item went in, except for the error cases above.
		res, err := c.MultiAsync(
			client.CreateOp(join(q.dir, prefix), data, q.o.acl, client.ModePersistentSequential),
			client.CreateOp(marker, nil, q.o.acl, client.ModeEphemeral),
		).Result()
		switch {
		case err == nil:
			q.dropMarker(marker)
			return base(res[0].Path), nil
		case connLoss(err):
		case len(res) == 2 && nodeExists(res[1].Err):
			// The marker is this Put's alone: an earlier attempt whose
			// reply was lost went in after the check below missed it.
			// The check finds it now.
		case noNode(err) && noNodes < maxNoNodeRetries:
			noNodes++
			if err := ensurePath(ctx, c, q.putsDir(), q.o.acl); err != nil {
				return "", err
			}
			continue
		default:
			return "", err
		}
		if err := catchUp(ctx, c, marker); err != nil {
			return "", err
		}
		st, err := exists(ctx, c, marker)
		if err != nil {
			return "", err
		}
		if st != nil && st.EphemeralOwner == c.SessionID() {
			q.dropMarker(marker)
			p, _, err := findByPrefix(ctx, c, q.dir, prefix)
			if err != nil {
				return "", nil // enqueued; only the name is unknown
			}
			return base(p), nil
		}
		if err := b.wait(ctx); err != nil {
			return "", err
		}
	}
}

func (q *Queue) putsDir() string { return join(q.dir, "puts") }

// dropMarker deletes a put marker in the background; it is ephemeral,
// so a failure costs nothing past the session.
func (q *Queue) dropMarker(marker string) {
	c := q.c
	q.o.background("put marker "+marker, func(ctx context.Context) error {
		return deleteOwned(ctx, c, marker, nil)
	})
}

// Len counts the items waiting (not the claimed ones).
func (q *Queue) Len(ctx context.Context) (int, error) {
	kids, err := children(ctx, q.c, q.dir)
	if noNode(err) {
		return 0, nil
	}
	return len(sortSeq(kids, itemPrefix)), err
}

// Take claims the oldest item and returns it, waiting for one if the
// queue is empty. The item stays claimed by this consumer until Ack. An
// error may leave an item claimed without returning it; the next Take, or
// a successor Queue with the same consumer ID, returns it.
func (q *Queue) Take(ctx context.Context) (Item, error) {
	if err := ensurePath(ctx, q.c, q.claimsDir(), q.o.acl); err != nil {
		return Item{}, err
	}
	if item, ok, err := q.takePending(ctx); err != nil || ok {
		return item, err
	}
	for {
		kids, ch, err := childrenW(ctx, q.c, q.dir)
		if err != nil {
			return Item{}, err
		}
		items := sortSeq(kids, itemPrefix)
		for _, it := range items {
			item, ok, err := q.claim(ctx, it)
			if err != nil {
				return Item{}, err
			}
			if ok {
				q.mu.Lock()
				q.out[item.Name] = true
				q.mu.Unlock()
				return item, nil
			}
		}
		if len(items) > 0 {
			continue // all taken by others: list again
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Item{}, ctx.Err()
		}
	}
}

// Ack says the consumer is done with it: the claim node goes. After an
// error the item may be returned again by a successor Queue.
func (q *Queue) Ack(ctx context.Context, it Item) error {
	_, err := retry(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, q.c.Delete(ctx, q.claimPath(it.Name), -1)
	})
	// Gone after a lost reply: our own delete, since only this consumer
	// acknowledges its claims.
	err = ignore(err, noNode)
	if err == nil {
		q.mu.Lock()
		delete(q.out, it.Name)
		q.mu.Unlock()
	}
	return err
}

// takePending returns the oldest claim node of this consumer that no Take
// of this Queue has returned: left by a predecessor with the same
// consumer ID, or by a claim whose outcome a failed Take could not learn.
// The claims are listed by the first Take, and again after such a
// failure.
func (q *Queue) takePending(ctx context.Context) (Item, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.recovered {
		q.pending = q.pending[:0]
		kids, err := children(ctx, q.c, q.claimsDir())
		if err != nil {
			return Item{}, false, err
		}
		var mine []string
		for _, k := range kids {
			if item, ok := strings.CutSuffix(k, claimSep+q.id); ok && strings.HasPrefix(item, itemPrefix) {
				mine = append(mine, item)
			}
		}
		for _, it := range sortSeq(mine, itemPrefix) {
			if !q.out[it.name] {
				q.pending = append(q.pending, it.name)
			}
		}
		q.recovered = true
	}
	for len(q.pending) > 0 {
		name := q.pending[0]
		data, _, err := get(ctx, q.c, q.claimPath(name))
		if noNode(err) {
			q.pending = q.pending[1:]
			continue
		}
		if err != nil {
			return Item{}, false, err
		}
		q.pending = q.pending[1:]
		seq, _ := parseSeq(name)
		q.out[name] = true
		return Item{Name: name, Seq: seq, Data: data}, true, nil
	}
	return Item{}, false, nil
}

type claimOutcome int

const (
	notClaimed claimOutcome = iota
	claimedByUs
	claimedByOther
)

// claim tries to take one item: ok reports whether this consumer got it.
func (q *Queue) claim(ctx context.Context, it seqNode) (Item, bool, error) {
	c := q.c
	p := join(q.dir, it.name)
	marker := q.claimPath(it.name)
	// lost: a claim of this call may have run without our learning it.
	// Then an item found gone may be gone by our hand: the claim node,
	// created in the same multi, tells.
	lost := false
	gone := func() (Item, bool, error) {
		if !lost {
			return Item{}, false, nil
		}
		data, _, err := get(ctx, c, marker)
		switch {
		case noNode(err):
			return Item{}, false, nil
		case err != nil:
			q.mu.Lock()
			q.recovered = false // the claim may have run: list the claims again next time
			q.mu.Unlock()
			return Item{}, false, err
		}
		return Item{Name: it.name, Seq: it.seq, Data: data}, true, nil
	}
	for range maxRequeues {
		data, st, err := get(ctx, c, p)
		if noNode(err) {
			return gone()
		}
		if err != nil {
			return Item{}, false, err
		}
		item := Item{Name: it.name, Seq: it.seq, Data: data}
		// Once sent, the claim is waited for even if ctx ends, so that
		// its outcome is known. The client fails a request within about a
		// session timeout of losing the connection, so this is bounded.
		res, err := c.MultiAsync(
			client.DeleteOp(p, st.Version),
			client.CreateOp(marker, data, q.o.acl, client.ModePersistent),
		).Result()
		switch {
		case err == nil:
			return item, true, nil
		case connLoss(err):
			lost = true
			outcome, err := q.resolve(ctx, p, marker)
			switch {
			case err != nil:
				q.mu.Lock()
				q.recovered = false // the claim may have run: list the claims again next time
				q.mu.Unlock()
				return Item{}, false, err
			case outcome == claimedByUs:
				return item, true, nil
			case outcome == claimedByOther:
				return Item{}, false, nil
			}
			continue // not executed and the item is still there
		case len(res) == 2 && noNode(res[0].Err):
			return gone() // someone else took it, or our lost claim did
		case len(res) == 2 && noNode(res[1].Err):
			if err := ensurePath(ctx, c, q.claimsDir(), q.o.acl); err != nil {
				return Item{}, false, err
			}
			continue
		case len(res) == 2 && errors.Is(res[0].Err, wire.CodeBadVersion):
			continue // rewritten in place (not by this recipe): read again
		default:
			return Item{}, false, err
		}
	}
	return Item{}, false, ErrGaveUp
}

// resolve decides, after a connection loss, whether this consumer's claim
// executed. An item still there was not claimed yet (the claim may still
// run: the server we reconnected to need not have applied it, and the
// caller's next attempt finds out). A gone item was claimed, by us if
// our claim node exists: the multi deletes the one and creates the other
// at once, and a session's reads never go back in time, so a claim node
// missing after the item was seen gone is missing for good. (Checking
// the claim node first would not do: the claim can apply between the
// two reads.)
func (q *Queue) resolve(ctx context.Context, item, marker string) (claimOutcome, error) {
	st, err := exists(ctx, q.c, item)
	switch {
	case err != nil:
		return notClaimed, err
	case st != nil:
		return notClaimed, nil
	}
	st, err = exists(ctx, q.c, marker)
	switch {
	case err != nil:
		return notClaimed, err
	case st != nil:
		return claimedByUs, nil
	}
	return claimedByOther, nil
}
