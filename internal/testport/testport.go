package testport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/corral-db/corral/internal/loopport"
)

// Ports are picked in [low, high): below the kernel's ephemeral range
// (internal/loopport).
const (
	low         = loopport.Low
	defaultHigh = 32768
)

var (
	mu sync.Mutex
	// handed are the ports this process gave out, each with the lock
	// file it holds for as long as it runs.
	handed = map[int]*os.File{}
	high   = loopport.High()
)

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

// Range returns the first of n consecutive loopback TCP ports that were
// free a moment ago and that this process has not handed out before, for
// a command that takes a base port and uses the n from it. Like Free's,
// the ports lie below the ephemeral range, where no outgoing connection
// takes one meanwhile, and are locked against other test processes.
func Range(t TB, n int) int {
	t.Helper()
	p, err := pickRange(n)
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

func pick() (int, error) { return pickRange(1) }

func pickRange(n int) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	if n < 1 || n > (high-low)/2 {
		return 0, fmt.Errorf("testport: cannot hand out %d consecutive ports", n)
	}
	for range 1000 {
		base := low + rand.IntN(high-low-n+1)
		locks := make([]*os.File, 0, n)
		for p := base; p < base+n; p++ {
			lock, ok := takePort(p)
			if !ok {
				break
			}
			locks = append(locks, lock)
		}
		if len(locks) < n {
			for _, l := range locks {
				if l != nil {
					l.Close()
				}
			}
			continue
		}
		for i, l := range locks {
			handed[base+i] = l
		}
		return base, nil
	}
	return 0, fmt.Errorf("testport: no %d free ports in [%d, %d) after 1000 tries", n, low, high)
}

// takePort claims p and checks that it can be bound; mu is held. ok
// false leaves nothing claimed.
func takePort(p int) (*os.File, bool) {
	if _, ok := handed[p]; ok {
		return nil, false
	}
	lock, ok := claim(p)
	if !ok {
		return nil, false
	}
	if !loopport.Bindable(p) {
		if lock != nil {
			lock.Close()
		}
		return nil, false
	}
	return lock, true
}

// lockDir holds one lock file per port handed out by any test process on
// this machine.
var lockDir = filepath.Join(os.TempDir(), "corral-testport")

// claim takes port p for this process among all test processes: an
// exclusive flock on lockDir/p, held until the process exits (the kernel
// drops it then, however the process ends). Test packages run in
// parallel processes, and a port a killed server left free for its
// restart was once handed to another package's server in between; the
// lock keeps every port a live test process handed out its own. ok is
// false if another process holds p. Where locking does not work at all,
// p is taken unlocked (the listen check alone, as before).
func claim(p int) (f *os.File, ok bool) {
	if err := os.MkdirAll(lockDir, 0o777); err != nil {
		return nil, true
	}
	f, err := os.OpenFile(filepath.Join(lockDir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, true
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case err == nil:
		return f, true
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, false
	default:
		f.Close()
		return nil, true
	}
}
