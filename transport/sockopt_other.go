//go:build !linux

package transport

import (
	"net"
	"time"
)

// setUserTimeout is Linux only; elsewhere keepalive and the writer's
// deadlines detect dead peers.
func setUserTimeout(*net.TCPConn, time.Duration) {}
