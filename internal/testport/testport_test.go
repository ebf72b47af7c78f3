package testport

import (
	"net"
	"strconv"
	"testing"
)

func TestFreeGivesDistinctBindablePortsBelowTheEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := Free(t)
		if p < low || p >= high || high > defaultHigh {
			t.Fatalf("port %d outside [%d, %d)", p, low, high)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d: %v", p, err)
		}
		l.Close()
	}
}

// A port this process handed out is locked against every other claim
// (another test process opening the same lock file is such a claim: a
// flock belongs to the open file, not to the process).
func TestHandedPortIsLockedForOthers(t *testing.T) {
	p := Free(t)
	if _, ok := handed[p]; !ok {
		t.Fatalf("port %d not recorded", p)
	}
	if handed[p] == nil {
		t.Skip("locking unavailable here")
	}
	if f, ok := claim(p); ok {
		f.Close()
		t.Fatalf("port %d claimed again while this process holds it", p)
	}
}

// Range hands out n consecutive ports, each bindable, none handed out
// before (by Free or Range), all below the ephemeral range.
func TestRangeGivesConsecutiveFreshPorts(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		base := Range(t, 3)
		for p := base; p < base+3; p++ {
			if p < low || p >= high {
				t.Fatalf("port %d outside [%d, %d)", p, low, high)
			}
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
			if _, ok := handed[p]; !ok {
				t.Fatalf("port %d not recorded", p)
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				t.Fatalf("port %d: %v", p, err)
			}
			l.Close()
		}
	}
	if p := Free(t); seen[p] {
		t.Fatalf("Free handed out %d, which Range had", p)
	}
}
