package kv

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The compaction-aware leader change (ACaZoo §III-C; docs/design/kv.md):
// a leader holds its compactions, and once its pending compaction work
// passes a threshold it hands leadership to a cooler member before the
// compaction runs, then compacts as a follower. DecideLeaderChange is the
// decision, a pure function of what the leader knows; kv/kvserver feeds
// it and carries it out.

// LeaderPolicy is how a leader picks the member it hands leadership to.
type LeaderPolicy uint8

const (
	// PolicyFixed never moves leadership for compaction: the leader
	// compacts as pebble schedules (the paper's baseline).
	PolicyFixed LeaderPolicy = iota
	// PolicyRandom picks a random cool member (the paper's RANDOM).
	PolicyRandom
	// PolicyRoundRobin picks the next cool member after the leader in id
	// order, wrapping around (the paper's RR).
	PolicyRoundRobin
	// PolicyCoolest picks the member with the least heat (ties: the
	// lower id).
	PolicyCoolest
)

var policyNames = [...]string{
	PolicyFixed:      "fixed",
	PolicyRandom:     "random",
	PolicyRoundRobin: "roundrobin",
	PolicyCoolest:    "coolest",
}

func (p LeaderPolicy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// ParseLeaderPolicy reads fixed, random, roundrobin or coolest (any case).
func ParseLeaderPolicy(s string) (LeaderPolicy, error) {
	for p, name := range policyNames {
		if strings.EqualFold(s, name) {
			return LeaderPolicy(p), nil
		}
	}
	return 0, fmt.Errorf("%w: leader policy %q: want fixed, random, roundrobin or coolest", ErrInvalid, s)
}

// LeaderChangeConfig configures the compaction-aware leader change.
type LeaderChangeConfig struct {
	Policy LeaderPolicy
	// Threshold is the heat (Temperature.Heat) at which a leader with a
	// compaction waiting hands leadership over; default 1 (a compaction
	// is due by pebble's L0 threshold or the debt threshold).
	Threshold float64
	// MinInterval is the least time between two leader changes the
	// member saw (an election, a handover or an attempt of its own); a
	// leader that is hot sooner compacts in place. Default 30 s.
	MinInterval time.Duration
	// Margin: a target must be cooler than the leader by at least
	// Margin, and cooler than the group's mean heat (leader included);
	// default 0.25.
	Margin float64
	// DebtThreshold is the compaction debt that counts as heat 1
	// (Store.Temperature's debtThreshold); default 64 MiB.
	DebtThreshold uint64
}

// Default values of LeaderChangeConfig.
const (
	DefaultLeaderChangeThreshold   = 1.0
	DefaultLeaderChangeMinInterval = 30 * time.Second
	DefaultLeaderChangeMargin      = 0.25
)

// WithDefaults returns c with its zero fields set to the defaults.
func (c LeaderChangeConfig) WithDefaults() LeaderChangeConfig {
	if c.Threshold <= 0 {
		c.Threshold = DefaultLeaderChangeThreshold
	}
	if c.MinInterval <= 0 {
		c.MinInterval = DefaultLeaderChangeMinInterval
	}
	if c.Margin <= 0 {
		c.Margin = DefaultLeaderChangeMargin
	}
	return c
}

// MemberHeat is what the leader knows of one other member.
type MemberHeat struct {
	ID   uint64
	Heat float64
	// Compacting: the member reported a data-rewriting compaction
	// running.
	Compacting bool
	// Eligible: a synced voter the leader heard from lately, its log
	// near the leader's, with a fresh temperature report. Only eligible
	// members are targets; every reported member counts in the mean.
	Eligible bool
}

// LeaderView is the input of DecideLeaderChange: the leader's own state
// and what it knows of the others.
type LeaderView struct {
	Now        time.Time
	LeaderID   uint64
	LastChange time.Time
	// Heat is the leader's; Pending says a compaction waits on its hold;
	// NearStall says L0 is close to stopping writes.
	Heat      float64
	Pending   bool
	NearStall bool
	// Members are the other members with a temperature report.
	Members []MemberHeat
	// Rand is a random number, PolicyRandom's choice.
	Rand uint64
}

// LeaderAction is what the leader does with its compactions.
type LeaderAction uint8

const (
	// Hold: keep holding compactions and keep leading.
	Hold LeaderAction = iota
	// Transfer: hand leadership to Decision.To, holding compactions
	// until this member follows.
	Transfer
	// CompactInPlace: release compactions and keep leading.
	CompactInPlace
)

func (a LeaderAction) String() string {
	switch a {
	case Hold:
		return "hold"
	case Transfer:
		return "transfer"
	case CompactInPlace:
		return "compact-in-place"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// Decision is DecideLeaderChange's answer.
type Decision struct {
	Action LeaderAction
	To     uint64
	// Reason says why, for logs.
	Reason string
}

// DecideLeaderChange decides what a leader does with its compactions.
// In order:
//   - PolicyFixed: compact in place (compactions are not held).
//   - L0 near the write stall: compact in place; a stalled leader is
//     worse than a compacting one (and a stalled member could not even
//     hand over, TiKV's lesson).
//   - nothing waits or the heat is below the threshold: hold.
//   - the last leader change is less than MinInterval old: compact in
//     place (no ping-pong).
//   - no eligible member that is not compacting, below the threshold,
//     below the group's mean heat and cooler than the leader by Margin:
//     compact in place rather than hand the compaction to a member about
//     as loaded.
//   - otherwise transfer to the candidate the policy picks.
func DecideLeaderChange(c LeaderChangeConfig, v LeaderView) Decision {
	c = c.WithDefaults()
	switch {
	case c.Policy == PolicyFixed:
		return Decision{Action: CompactInPlace, Reason: "fixed leader"}
	case v.NearStall:
		return Decision{Action: CompactInPlace, Reason: "L0 near the write stall"}
	case !v.Pending:
		return Decision{Action: Hold, Reason: "no compaction waiting"}
	case v.Heat < c.Threshold:
		return Decision{Action: Hold, Reason: fmt.Sprintf("heat %.2f below %.2f", v.Heat, c.Threshold)}
	}
	if since := v.Now.Sub(v.LastChange); since < c.MinInterval {
		return Decision{Action: CompactInPlace, Reason: fmt.Sprintf("last leader change %v ago, under %v", since.Round(time.Millisecond), c.MinInterval)}
	}
	sum := v.Heat
	for _, m := range v.Members {
		sum += m.Heat
	}
	mean := sum / float64(len(v.Members)+1)
	var cool []MemberHeat
	for _, m := range v.Members {
		if m.ID != v.LeaderID && m.Eligible && !m.Compacting && m.Heat < c.Threshold && m.Heat < mean && m.Heat+c.Margin <= v.Heat {
			cool = append(cool, m)
		}
	}
	if len(cool) == 0 {
		return Decision{Action: CompactInPlace, Reason: fmt.Sprintf("no member below the mean heat %.2f and %.2f below the leader's %.2f", mean, c.Margin, v.Heat)}
	}
	slices.SortFunc(cool, func(a, b MemberHeat) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	var to MemberHeat
	switch c.Policy {
	case PolicyRandom:
		to = cool[v.Rand%uint64(len(cool))]
	case PolicyRoundRobin:
		to = cool[0]
		for _, m := range cool {
			if m.ID > v.LeaderID {
				to = m
				break
			}
		}
	default: // PolicyCoolest
		to = cool[0]
		for _, m := range cool[1:] {
			if m.Heat < to.Heat {
				to = m
			}
		}
	}
	return Decision{Action: Transfer, To: to.ID, Reason: fmt.Sprintf("%v: heat %.2f, member %d at %.2f (mean %.2f)", c.Policy, v.Heat, to.ID, to.Heat, mean)}
}
