package loopport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Low is the first port Pick considers: above the well-known and
// registered ports most services on a machine use.
const Low = 20000

// defaultHigh is the start of Linux's default ephemeral range
// (32768-60999).
const defaultHigh = 32768

// High is the end (exclusive) of the ports Pick considers: the first port
// of the kernel's ephemeral range, or 32768 if that cannot be read or
// lies above it or too close to Low.
func High() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultHigh
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return defaultHigh
	}
	p, err := strconv.Atoi(f[0])
	if err != nil || p <= Low+1000 {
		return defaultHigh
	}
	return min(p, defaultHigh)
}

// Bindable reports whether 127.0.0.1:p can be listened on now.
func Bindable(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Pick returns k distinct loopback ports in [Low, High()) that could be
// bound a moment ago.
func Pick(k int) ([]int, error) {
	high := High()
	if k < 0 || k > (high-Low)/2 {
		return nil, fmt.Errorf("loopport: cannot pick %d ports in [%d, %d)", k, Low, high)
	}
	ports := make([]int, 0, k)
	taken := make(map[int]bool, k)
	for tries := 0; len(ports) < k; tries++ {
		if tries == 1000*max(k, 1) {
			return nil, fmt.Errorf("loopport: %d of %d free ports found in [%d, %d)", len(ports), k, Low, high)
		}
		p := Low + rand.IntN(high-Low)
		if taken[p] || !Bindable(p) {
			continue
		}
		taken[p] = true
		ports = append(ports, p)
	}
	return ports, nil
}
