package transport

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// setUserTimeout sets TCP_USER_TIMEOUT: how long sent data may remain
// unacknowledged before the kernel gives up on the connection. Keepalive
// alone does not cover that case (Linux sends no probes while data is in
// flight, and retransmits for about fifteen minutes), so a peer machine
// that vanished with our data unacknowledged would keep the connection
// looking live. Best effort: failure leaves the kernel default.
func setUserTimeout(tc *net.TCPConn, d time.Duration) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
	})
}
