//go:build probe

package probe

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

type event struct {
	t     int64
	stage string
	zxid  int64
}

const capacity = 1 << 21

var (
	events [capacity]event
	next   atomic.Int64
)

// Enabled reports whether marks are recorded.
const Enabled = true

// Mark records stage for zxid (0 if not known yet) at the current time.
func Mark(stage string, zxid int64) {
	i := next.Add(1) - 1
	if i < capacity {
		events[i] = event{time.Now().UnixNano(), stage, zxid}
	}
}

// Dump writes the marks to $CORRAL_PROBE_DIR/probe-PID.txt, if that
// variable is set.
func Dump() error {
	dir := os.Getenv("CORRAL_PROBE_DIR")
	if dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("probe-%d.txt", os.Getpid())))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	n := min(next.Load(), capacity)
	for i := range n {
		e := &events[i]
		fmt.Fprintf(w, "%d %s %d\n", e.t, e.stage, e.zxid)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
