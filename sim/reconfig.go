package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/corral-db/corral/zab"
)

// Reconfiguration as a fault: the leader is asked, at random times, to
// add or remove a voter or an observer (zab's membership change,
// zab/membership.go) while every other fault goes on, leaders failing
// mid-change included. Spare servers run from the start outside the
// configuration (joining servers, non-voting followers) so that voters can
// be added beyond the initial ensemble; removed servers keep running as
// non-voting followers and may be added back.
//
// The simulator's own view of the configuration is the committed history:
// a server (re)starts with the configuration of the last change committed
// at or below its state's zxid (what a real server persists beside its
// snapshot, ZooKeeper's dynamic configuration file) and zab reads the
// changes in its log after that. The checks that count voters (an entry
// first applied is durable on a quorum; diskless crashes stay within f)
// use the configuration in force.

// reconfigState is the cluster's record of configuration changes.
type reconfigState struct {
	init zab.Membership
	// committed are the committed changes, in zxid order.
	committed []committedConfig
	// proposed are the changes proposed after the last committed one:
	// some log may hold them, so they may be in force.
	proposed []committedConfig
}

type committedConfig struct {
	zxid zab.Zxid
	m    zab.Membership
}

// randomReconfigOptions draws the reconfiguration settings; RandomOptions
// calls it last, so the draws before it mean what they did.
func randomReconfigOptions(r *rand.Rand, o *Options) {
	if r.IntN(2) == 0 {
		return
	}
	o.Spares = r.IntN(3)
	o.ReconfigRate = r.Float64() * 0.004
}

func (c *Cluster) initMembership() {
	o := c.opts
	var m zab.Membership
	for i := 1; i <= o.Voters+o.Observers; i++ {
		if i <= o.Voters {
			m.Voters = append(m.Voters, uint64(i))
		} else {
			m.Observers = append(m.Observers, uint64(i))
		}
	}
	c.rc = &reconfigState{init: m}
	c.setVoters(m)
}

// membershipAt is the configuration committed at or below z and the zxid
// of its entry.
func (c *Cluster) membershipAt(z zab.Zxid) (zab.Membership, zab.Zxid) {
	m, mz := c.rc.init, zab.Zxid(0)
	for _, cc := range c.rc.committed {
		if cc.zxid <= z {
			m, mz = cc.m, cc.zxid
		}
	}
	return m, mz
}

// active is the last committed configuration.
func (c *Cluster) active() zab.Membership {
	if k := len(c.rc.committed); k > 0 {
		return c.rc.committed[k-1].m
	}
	return c.rc.init
}

// configApplied records a change when it is first applied (committed):
// the history is applied in order, so the list stays sorted.
func (c *Cluster) configApplied(e zab.Entry) {
	m, ok := zab.DecodeMembership(e.Data)
	if !ok {
		return
	}
	c.rc.committed = append(c.rc.committed, committedConfig{zxid: e.Zxid, m: m})
	c.rc.proposed = slices.DeleteFunc(c.rc.proposed, func(p committedConfig) bool { return p.zxid <= e.Zxid })
	c.Stats.Reconfigs++
	c.setVoters(m)
	c.note(0, fmt.Sprintf("configuration %v committed at %v", m, e.Zxid))
}

func (c *Cluster) setVoters(m zab.Membership) {
	c.voters = slices.Clone(m.Voters)
	for _, id := range c.ids {
		c.servers[id].voter = c.inForceVoter(id)
	}
}

// inForce are the configurations that may be in force somewhere: the
// last committed and those proposed after it.
func (c *Cluster) inForce() []zab.Membership {
	out := []zab.Membership{c.active()}
	for _, p := range c.rc.proposed {
		out = append(out, p.m)
	}
	return out
}

// mayBeInForce adds to inForce the configurations that the running
// servers count by: a server that has not yet learned that a change was
// committed still holds the configuration before it in force (with the
// change pending), and elects and commits only with a quorum of both.
// Until it learns the commit, that older configuration is one the
// diskless promise must keep available: crashing a voter of it beyond
// its f can leave the servers that hold the change pending without a
// quorum of the old configuration, and the recovering voter without a
// leader to recover from (seed 6030 in diskless mode did that).
func (c *Cluster) mayBeInForce() []zab.Membership {
	out := c.inForce()
	for _, id := range c.ids {
		s := c.servers[id]
		if !s.up || s.fuzzy || s.d == nil {
			// A recovering server neither elects nor counts.
			continue
		}
		st := s.d.Status()
		for _, m := range []*zab.Membership{&st.Membership, st.PendingMembership} {
			if m != nil && !slices.ContainsFunc(out, func(o zab.Membership) bool { return sameMembership(o, *m) }) {
				out = append(out, m.Clone())
			}
		}
	}
	return out
}

func sameMembership(a, b zab.Membership) bool {
	return slices.Equal(a.Voters, b.Voters) && slices.Equal(a.Observers, b.Observers)
}

func (c *Cluster) inForceVoter(id uint64) bool {
	for _, m := range c.inForce() {
		if m.IsVoter(id) {
			return true
		}
	}
	return false
}

// disklessMayCrash reports whether crashing server id keeps diskless
// mode's promise: at most f voters down or recovering, in every
// configuration that may be in force.
func (c *Cluster) disklessMayCrash(id uint64) bool {
	for _, m := range c.mayBeInForce() {
		if !m.IsVoter(id) {
			continue
		}
		down := 0
		for _, v := range m.Voters {
			if s := c.servers[v]; !s.up || s.fuzzy {
				down++
			}
		}
		if down+1 > (len(m.Voters)-1)/2 {
			return false
		}
	}
	return true
}

// reconfigRandom asks the leader for a random change of one server's
// role.
func (c *Cluster) reconfigRandom() {
	l := c.Leader()
	if l == 0 {
		return
	}
	s := c.servers[l]
	if c.now < s.paused {
		return
	}
	st := s.d.Status()
	if st.PendingMembership != nil {
		return
	}
	cur := st.Membership
	if c.opts.Mode == ModeDiskless && c.unavailable() > 0 {
		// Diskless durability holds while at most f voters are down or
		// recovering; a change of f with some down could break it.
		return
	}
	next := cur.Clone()
	id := c.ids[c.rng.IntN(len(c.ids))]
	switch {
	case cur.IsVoter(id):
		if len(cur.Voters) == 1 {
			return
		}
		next.Voters = slices.DeleteFunc(next.Voters, func(x uint64) bool { return x == id })
		if c.rng.IntN(2) == 0 {
			next.Observers = append(next.Observers, id)
		}
	case cur.IsObserver(id):
		next.Observers = slices.DeleteFunc(next.Observers, func(x uint64) bool { return x == id })
		if c.rng.IntN(2) == 0 {
			next.Voters = append(next.Voters, id)
		}
	default:
		if len(cur.Voters) < 7 && c.rng.IntN(2) == 0 {
			next.Voters = append(next.Voters, id)
		} else {
			next.Observers = append(next.Observers, id)
		}
	}
	if c.opts.Mode == ModeDiskless {
		for _, v := range next.Voters {
			if vs := c.servers[v]; !vs.up || vs.fuzzy {
				return
			}
		}
	}
	slices.Sort(next.Voters)
	slices.Sort(next.Observers)
	// The change may be in force once some log holds it: recorded before
	// the driver runs, which may commit it at once.
	z, err := c.proposeAt(s, zab.EncodeMembership(next), func(z zab.Zxid) {
		c.rc.proposed = append(c.rc.proposed, committedConfig{zxid: z, m: next})
		c.setVoters(c.active())
	})
	switch {
	case err == nil:
		c.note(l, fmt.Sprintf("reconfig %v at %v", next, z))
	case errors.Is(err, zab.ErrNewConfigNoQuorum), errors.Is(err, zab.ErrReconfigInProgress),
		errors.Is(err, zab.ErrNotLeader), errors.Is(err, zab.ErrEpochExhausted), errors.Is(err, zab.ErrTransferring):
	default:
		c.fail(fmt.Errorf("server %d: reconfig: %w", l, err))
	}
}

// describeMembership is a server's configurations for failure reports.
func describeMembership(st zab.Status) string {
	s := fmt.Sprintf("(config %v", st.Membership)
	if st.PendingMembership != nil {
		s += fmt.Sprintf(" pending %v", *st.PendingMembership)
	}
	return s + ") "
}
