package harness

import "testing"

// FreePort is a free loopback TCP port (for a second port of a server,
// such as secureClientPort).
func FreePort(t testing.TB) int {
	t.Helper()
	return freePort(t)
}
