package sim

import (
	"fmt"

	"github.com/corral-db/corral/zab"
)

// checker holds the global view the invariants are checked against.
type checker struct {
	// order is the committed history as first applied by anyone; every
	// server's applied sequence must be a prefix of it. This holds in
	// every mode, so no committed (acknowledged) entry may ever be lost:
	// the fault schedule stays within each mode's promise (see
	// Cluster.checkHistory, which holds the register workload to the same).
	order  []zab.Zxid
	index  map[zab.Zxid]int
	digest map[zab.Zxid]uint64 // state digest after applying the entry
	// content is the payload hash of every zxid ever appended anywhere.
	content map[zab.Zxid]uint64
	// leaders is the established leader of each epoch.
	leaders map[uint32]uint64
	// pos is, per server, the index in order of its applied state (-1:
	// nothing applied).
	pos map[uint64]int
	hs  map[uint64]zab.HardState
}

func newChecker() *checker {
	return &checker{
		index:   map[zab.Zxid]int{},
		digest:  map[zab.Zxid]uint64{},
		content: map[zab.Zxid]uint64{},
		leaders: map[uint32]uint64{},
		pos:     map[uint64]int{},
		hs:      map[uint64]zab.HardState{},
	}
}

// appended checks that a zxid always names the same transaction.
func (c *checker) appended(id uint64, ents []zab.Entry) error {
	for _, e := range ents {
		h := contentHash(e.Data)
		if old, ok := c.content[e.Zxid]; ok && old != h {
			return fmt.Errorf("zxid %v appended on server %d with different content (%q)", e.Zxid, id, e.Data)
		}
		c.content[e.Zxid] = h
	}
	return nil
}

// restored: a server (re)starts from, or installs, a snapshot at m.
func (c *checker) restored(id uint64, m machine) error {
	if m.zxid == 0 {
		if m.digest != 0 {
			return fmt.Errorf("server %d: empty state with digest %x", id, m.digest)
		}
		c.pos[id] = -1
		return nil
	}
	i, ok := c.index[m.zxid]
	if !ok {
		return fmt.Errorf("server %d: snapshot at %v, which was never committed", id, m.zxid)
	}
	if c.digest[m.zxid] != m.digest {
		return fmt.Errorf("server %d: snapshot at %v has digest %x, committed state has %x", id, m.zxid, m.digest, c.digest[m.zxid])
	}
	c.pos[id] = i
	return nil
}

// applied: server id applied e and its digest is now m.digest. isNew
// reports an entry applied for the first time anywhere.
func (c *checker) applied(id uint64, e zab.Entry, m machine) (isNew bool, err error) {
	next := c.pos[id] + 1
	h := contentHash(e.Data)
	if next < len(c.order) {
		if want := c.order[next]; want != e.Zxid {
			return false, fmt.Errorf("server %d applied %v at position %d where %v was committed", id, e.Zxid, next, want)
		}
		if c.content[e.Zxid] != h {
			return false, fmt.Errorf("server %d applied %v with different content", id, e.Zxid)
		}
		if c.digest[e.Zxid] != m.digest {
			return false, fmt.Errorf("server %d digest %x at %v, others %x", id, m.digest, e.Zxid, c.digest[e.Zxid])
		}
		c.pos[id] = next
		return false, nil
	}
	if n := len(c.order); n > 0 && c.order[n-1] >= e.Zxid {
		return false, fmt.Errorf("server %d committed %v after %v: out of order", id, e.Zxid, c.order[n-1])
	}
	if old, ok := c.content[e.Zxid]; ok && old != h {
		return false, fmt.Errorf("server %d applied %v with content never proposed", id, e.Zxid)
	}
	c.order = append(c.order, e.Zxid)
	c.index[e.Zxid] = next
	c.digest[e.Zxid] = m.digest
	c.pos[id] = next
	return true, nil
}

// soft checks the soft state a server reports.
func (c *checker) soft(id uint64, ss zab.SoftState) error {
	if !ss.Established() {
		return nil
	}
	if l, ok := c.leaders[ss.Epoch]; ok && l != id {
		return fmt.Errorf("two leaders established in epoch %d: %d and %d", ss.Epoch, l, id)
	}
	c.leaders[ss.Epoch] = id
	return nil
}

// hardState checks that persisted epochs only grow.
func (c *checker) hardState(id uint64, hs zab.HardState) error {
	if hs.CurrentEpoch > hs.AcceptedEpoch {
		return fmt.Errorf("server %d: currentEpoch %d above acceptedEpoch %d", id, hs.CurrentEpoch, hs.AcceptedEpoch)
	}
	old := c.hs[id]
	if hs.AcceptedEpoch < old.AcceptedEpoch || hs.CurrentEpoch < old.CurrentEpoch {
		return fmt.Errorf("server %d: hard state went back from %+v to %+v", id, old, hs)
	}
	c.hs[id] = hs
	return nil
}
