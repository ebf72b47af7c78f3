package client

import "sync"

// fifo is the queue of requests sent on one connection and not yet
// answered. The writer appends a batch under the lock just before writing
// it; the reader consumes from a private slice and only takes the lock to
// swap in the writer's accumulated batch when its own runs out, so under
// load the reader locks once per batch, not once per reply.
type fifo struct {
	mu   sync.Mutex
	in   []*request // appended by the writer
	out  []*request // consumed by the reader
	head int
}

func (q *fifo) push(rs []*request) {
	q.mu.Lock()
	q.in = append(q.in, rs...)
	q.mu.Unlock()
}

func (q *fifo) push1(r *request) {
	q.mu.Lock()
	q.in = append(q.in, r)
	q.mu.Unlock()
}

// peek returns the oldest request, or nil if there is none. Reader only.
func (q *fifo) peek() *request {
	if q.head == len(q.out) {
		q.mu.Lock()
		q.out, q.in = q.in, q.out[:0]
		q.mu.Unlock()
		q.head = 0
		if len(q.out) == 0 {
			return nil
		}
	}
	return q.out[q.head]
}

// pop removes the request peek returned. Reader only.
func (q *fifo) pop() {
	q.out[q.head] = nil
	q.head++
}

// drain removes and returns everything, oldest first. Only after the
// reader and the writer have stopped.
func (q *fifo) drain() []*request {
	rs := append([]*request(nil), q.out[q.head:]...)
	rs = append(rs, q.in...)
	clear(q.out)
	clear(q.in)
	q.out, q.in, q.head = q.out[:0], q.in[:0], 0
	return rs
}
