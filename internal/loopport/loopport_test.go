package loopport

import (
	"net"
	"testing"
)

func TestPickDistinctBindableBelowEphemeral(t *testing.T) {
	high := High()
	if high <= Low || high > defaultHigh {
		t.Fatalf("High() = %d, want in (%d, %d]", high, Low, defaultHigh)
	}
	ports, err := Pick(30)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 30 {
		t.Fatalf("%d ports, want 30", len(ports))
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < Low || p >= high {
			t.Fatalf("port %d outside [%d, %d)", p, Low, high)
		}
		if seen[p] {
			t.Fatalf("port %d picked twice", p)
		}
		seen[p] = true
		if !Bindable(p) {
			t.Fatalf("port %d not bindable", p)
		}
	}
}

func TestBindableFalseWhileBound(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := l.Addr().(*net.TCPAddr).Port
	if Bindable(p) {
		t.Fatalf("port %d reported bindable while listened on", p)
	}
	if _, err := Pick(-1); err == nil {
		t.Fatal("Pick(-1) succeeded")
	}
}
