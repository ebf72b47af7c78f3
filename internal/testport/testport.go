package testport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports are picked in [low, high): above the well-known and registered
// ports most services use here, below Linux's default ephemeral range
// (32768-60999). If the machine's ephemeral range starts lower, high
// follows it.
const (
	low         = 20000
	defaultHigh = 32768
)

var (
	mu     sync.Mutex
	handed = map[int]bool{}
	high   = ephemeralStart()
)

// ephemeralStart reads the first port of Linux's ephemeral range, or
// defaultHigh where it cannot.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultHigh
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return defaultHigh
	}
	p, err := strconv.Atoi(f[0])
	if err != nil || p <= low+1000 {
		return defaultHigh
	}
	return min(p, defaultHigh)
}

// TB is the part of testing.TB that Free uses.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Free returns a loopback TCP port that was free a moment ago and that
// this process has not handed out before.
func Free(t TB) int {
	t.Helper()
	p, err := pick()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Addr is Free as "127.0.0.1:port".
func Addr(t TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(Free(t)))
}

func pick() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	for range 1000 {
		p := low + rand.IntN(high-low)
		if handed[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		handed[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("testport: no free port in [%d, %d) after 1000 tries", low, high)
}
