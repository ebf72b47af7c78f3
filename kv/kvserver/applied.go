package kvserver

import (
	"container/heap"
	"sync"

	"github.com/corral-db/corral/zab"
)

// appliedWaiters wakes the requests waiting until the store has applied a
// zxid: a write for its own entry, a read for the commit point its
// confirmation round saw. An Apply wakes only the waiters whose zxid it
// reached, so a busy leader with many writes in flight does not wake
// every one of them at each Apply to find that most must wait on; a
// change of role or an installed snapshot wakes them all, and each
// re-checks what it waits for.
//
// A waiter whose caller gave up stays queued until an Apply reaches its
// zxid or the next wakeAll: it is an entry proposed in the current epoch,
// which either applies or ends with a role change, so the queue holds at
// most the writes and read rounds in flight.
type appliedWaiters struct {
	mu      sync.Mutex
	applied zab.Zxid    // guarded by mu: the newest zxid advance saw
	q       waiterQueue // guarded by mu: by zxid, oldest first
}

type appliedWaiter struct {
	z  zab.Zxid
	ch chan struct{}
}

// wait returns a channel closed once an Apply reaches z or all waiters
// are woken. The caller checks its condition after calling wait, so that
// an Apply in between is not missed.
func (a *appliedWaiters) wait(z zab.Zxid) <-chan struct{} {
	ch := make(chan struct{})
	a.mu.Lock()
	defer a.mu.Unlock()
	if z <= a.applied {
		close(ch)
		return ch
	}
	heap.Push(&a.q, appliedWaiter{z: z, ch: ch})
	return ch
}

// advance wakes the waiters at or below applied.
func (a *appliedWaiters) advance(applied zab.Zxid) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if applied > a.applied {
		a.applied = applied
	}
	for len(a.q) > 0 && a.q[0].z <= applied {
		close(heap.Pop(&a.q).(appliedWaiter).ch)
	}
}

// wakeAll wakes every waiter and forgets the applied zxid (an installed
// snapshot may move it anywhere; each waiter re-checks the store).
func (a *appliedWaiters) wakeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied = 0
	for _, w := range a.q {
		close(w.ch)
	}
	clear(a.q)
	a.q = a.q[:0]
}

// waiterQueue is a min-heap of waiters by zxid (container/heap).
type waiterQueue []appliedWaiter

func (q waiterQueue) Len() int           { return len(q) }
func (q waiterQueue) Less(i, j int) bool { return q[i].z < q[j].z }
func (q waiterQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *waiterQueue) Push(x any)        { *q = append(*q, x.(appliedWaiter)) }
func (q *waiterQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = appliedWaiter{}
	*q = old[:len(old)-1]
	return w
}
