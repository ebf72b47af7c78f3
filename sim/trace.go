package sim

import (
	"fmt"

	"github.com/corral-db/corral/zab"
)

// trace keeps the last events of a run, formatted only when a run fails.
type trace struct {
	ev   []event
	next int
	full bool
}

type event struct {
	t    int64
	id   uint64
	text string
	m    zab.Message
	msg  bool
	z    zab.Zxid // appended to text if hasZ
	hasZ bool
}

func newTrace(n int) *trace { return &trace{ev: make([]event, max(n, 1))} }

func (tr *trace) add(e event) {
	tr.ev[tr.next] = e
	tr.next++
	if tr.next == len(tr.ev) {
		tr.next = 0
		tr.full = true
	}
}

func (tr *trace) lines() []string {
	var out []string
	start, n := 0, tr.next
	if tr.full {
		start, n = tr.next, len(tr.ev)
	}
	for i := 0; i < n; i++ {
		e := tr.ev[(start+i)%len(tr.ev)]
		if e.msg {
			out = append(out, fmt.Sprintf("t=%d deliver %v", e.t, e.m))
		} else if e.hasZ {
			out = append(out, fmt.Sprintf("t=%d [%d] %s%v", e.t, e.id, e.text, e.z))
		} else {
			out = append(out, fmt.Sprintf("t=%d [%d] %s", e.t, e.id, e.text))
		}
	}
	return out
}
