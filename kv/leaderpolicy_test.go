package kv

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hot is a leader at the threshold with a compaction waiting, whose last
// leader change is long past, and two cool eligible followers.
func hot() LeaderView {
	return LeaderView{
		Now: t0.Add(time.Hour), LeaderID: 2, LastChange: t0,
		Heat: 1.2, Pending: true,
		Members: []MemberHeat{
			{ID: 1, Heat: 0.5, Eligible: true},
			{ID: 3, Heat: 0.25, Eligible: true},
		},
	}
}

func TestDecideLeaderChange(t *testing.T) {
	cfg := func(p LeaderPolicy) LeaderChangeConfig { return LeaderChangeConfig{Policy: p} }
	tests := []struct {
		name   string
		cfg    LeaderChangeConfig
		view   func(v *LeaderView)
		action LeaderAction
		to     uint64
	}{
		{"coolest", cfg(PolicyCoolest), nil, Transfer, 3},
		{"round robin: the next id after the leader", cfg(PolicyRoundRobin), nil, Transfer, 3},
		{"round robin wraps around", cfg(PolicyRoundRobin), func(v *LeaderView) {
			v.LeaderID = 3
			v.Members[1].ID = 2
		}, Transfer, 1},
		{"random: Rand picks among the cool in id order", cfg(PolicyRandom), func(v *LeaderView) { v.Rand = 4 }, Transfer, 1},
		{"random, another draw", cfg(PolicyRandom), func(v *LeaderView) { v.Rand = 5 }, Transfer, 3},
		{"fixed compacts in place", cfg(PolicyFixed), nil, CompactInPlace, 0},
		{"nothing waits: hold", cfg(PolicyCoolest), func(v *LeaderView) { v.Pending = false }, Hold, 0},
		{"below the threshold: hold", cfg(PolicyCoolest), func(v *LeaderView) { v.Heat = 0.9 }, Hold, 0},
		{"a higher threshold: hold", LeaderChangeConfig{Policy: PolicyCoolest, Threshold: 2}, nil, Hold, 0},
		{"near the write stall: compact in place", cfg(PolicyCoolest), func(v *LeaderView) { v.NearStall = true }, CompactInPlace, 0},
		{"near the stall even below the threshold", cfg(PolicyCoolest), func(v *LeaderView) { v.NearStall, v.Heat, v.Pending = true, 0.1, false }, CompactInPlace, 0},
		{"a recent change: compact in place", cfg(PolicyCoolest), func(v *LeaderView) { v.LastChange = v.Now.Add(-29 * time.Second) }, CompactInPlace, 0},
		{"a change just over the interval ago", cfg(PolicyCoolest), func(v *LeaderView) { v.LastChange = v.Now.Add(-30 * time.Second) }, Transfer, 3},
		{"a shorter interval", LeaderChangeConfig{Policy: PolicyCoolest, MinInterval: time.Second}, func(v *LeaderView) { v.LastChange = v.Now.Add(-2 * time.Second) }, Transfer, 3},
		{"the coolest compacting: the next coolest", cfg(PolicyCoolest), func(v *LeaderView) { v.Members[1].Compacting = true }, Transfer, 1},
		{"the coolest not eligible: the next coolest", cfg(PolicyCoolest), func(v *LeaderView) { v.Members[1].Eligible = false }, Transfer, 1},
		{"round robin skips a compacting member", cfg(PolicyRoundRobin), func(v *LeaderView) { v.Members[1].Compacting = true }, Transfer, 1},
		{"every member compacting: compact in place", cfg(PolicyRandom), func(v *LeaderView) {
			v.Members[0].Compacting, v.Members[1].Compacting = true, true
		}, CompactInPlace, 0},
		{"no member reported: compact in place", cfg(PolicyCoolest), func(v *LeaderView) { v.Members = nil }, CompactInPlace, 0},
		{"members as hot as the leader: compact in place", cfg(PolicyCoolest), func(v *LeaderView) {
			v.Members[0].Heat, v.Members[1].Heat = 1.1, 1.0
		}, CompactInPlace, 0},
		{"members not clearly cooler than the leader", cfg(PolicyCoolest), func(v *LeaderView) {
			v.Members[0].Heat, v.Members[1].Heat = 1.0, 0.99
		}, CompactInPlace, 0},
		{"a cool member above the group's mean", cfg(PolicyRoundRobin), func(v *LeaderView) {
			// mean (1.2+0.8+0)/3 = 0.67: member 3 is the only target.
			v.LeaderID = 1
			v.Members = []MemberHeat{{ID: 2, Heat: 0.8, Eligible: true}, {ID: 3, Heat: 0, Eligible: true}}
		}, Transfer, 3},
		{"a larger margin", LeaderChangeConfig{Policy: PolicyCoolest, Margin: 1.1}, nil, CompactInPlace, 0},
		{"the leader's own entry is never a target", cfg(PolicyCoolest), func(v *LeaderView) {
			v.Members = append(v.Members, MemberHeat{ID: 2, Heat: 0, Eligible: true})
		}, Transfer, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := hot()
			if tt.view != nil {
				tt.view(&v)
			}
			d := DecideLeaderChange(tt.cfg, v)
			if d.Action != tt.action || d.To != tt.to {
				t.Fatalf("got %v to %d (%s), want %v to %d", d.Action, d.To, d.Reason, tt.action, tt.to)
			}
			if d.Reason == "" {
				t.Fatal("no reason given")
			}
		})
	}
}

// TestDecideRandomSpreads: RANDOM reaches every cool member and no other.
func TestDecideRandomSpreads(t *testing.T) {
	v := hot()
	v.Members[0].Heat = 0.3 // below the mean (0.39)
	v.Members = append(v.Members, MemberHeat{ID: 4, Heat: 0.1, Eligible: true}, MemberHeat{ID: 5, Heat: 0.1, Compacting: true, Eligible: true})
	seen := map[uint64]bool{}
	for r := uint64(0); r < 30; r++ {
		v.Rand = r * 7919
		d := DecideLeaderChange(LeaderChangeConfig{Policy: PolicyRandom}, v)
		if d.Action != Transfer {
			t.Fatalf("rand %d: %v (%s)", v.Rand, d.Action, d.Reason)
		}
		seen[d.To] = true
	}
	if len(seen) != 3 || !seen[1] || !seen[3] || !seen[4] {
		t.Fatalf("targets %v, want 1, 3 and 4", seen)
	}
}

func TestParseLeaderPolicy(t *testing.T) {
	for _, p := range []LeaderPolicy{PolicyFixed, PolicyRandom, PolicyRoundRobin, PolicyCoolest} {
		got, err := ParseLeaderPolicy(p.String())
		if err != nil || got != p {
			t.Fatalf("%v: got %v, %v", p, got, err)
		}
	}
	if got, err := ParseLeaderPolicy("RoundRobin"); err != nil || got != PolicyRoundRobin {
		t.Fatalf("RoundRobin: %v, %v", got, err)
	}
	for _, s := range []string{"", "rr", "coolest ", "leastloaded"} {
		if _, err := ParseLeaderPolicy(s); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%q: %v, want ErrInvalid", s, err)
		}
	}
}
