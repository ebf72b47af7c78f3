package testutil

import "github.com/corral-db/corral/internal/testport"

// PortTB is the part of testing.TB FreePort uses.
type PortTB = testport.TB

// FreePort returns a loopback TCP port free a moment ago, below the
// kernel's ephemeral range and never handed out twice in one process.
func FreePort(t PortTB) int {
	t.Helper()
	return testport.Free(t)
}

// FreeAddr is FreePort as "127.0.0.1:port".
func FreeAddr(t PortTB) string {
	t.Helper()
	return testport.Addr(t)
}
