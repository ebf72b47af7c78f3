package kv

import "testing"

// TestRoutingConfig: -routing defaults to routed, refuses an unknown
// mode, and a forwarded run is named apart (its own scaling series).
func TestRoutingConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Fill(); err != nil || len(c.Routing) != 1 || c.Routing[0] != RoutingRouted {
		t.Fatalf("default routing %v (%v)", c.Routing, err)
	}
	c = DefaultConfig()
	c.Routing = []string{RoutingRouted, "proxied"}
	if err := c.Fill(); err == nil {
		t.Fatal("routing proxied accepted")
	}
	if got := corralRunName("", "", 4, RoutingForwarded); got != "corral[forwarded,g=4]" {
		t.Fatalf("forwarded name %q", got)
	}
	if got := corralRunName("coolest", "", 2, RoutingRouted); got != corralName("coolest", 2) {
		t.Fatalf("routed name %q, want %q", got, corralName("coolest", 2))
	}
	if p := policyOf(corralRunName("", "", 4, RoutingForwarded)); p != RoutingForwarded {
		t.Fatalf("scaling series of a forwarded run: %q", p)
	}
}
