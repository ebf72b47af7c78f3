package server

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/corral-db/corral/wire"
)

// errOutputFull means a client stopped reading and its queued output passed
// the limit; the connection is closed rather than letting memory grow.
var errOutputFull = errors.New("server: client output buffer full")

// outbuf is a connection's bounded output queue. Producers (the
// connection's reader, the apply goroutine, watch triggers) encode frames
// straight into it under its lock; the writer goroutine swaps the buffer
// out and writes it with one syscall, so replies that pile up while a write
// is in flight leave together.
type outbuf struct {
	mu     sync.Mutex
	buf    []byte
	spare  []byte
	limit  int
	closed bool
	err    error
	// frames counts frames queued since the writer last swapped.
	frames int
	wake   chan struct{}
	// after is set when the connection must close once the buffer is
	// flushed (closeSession reply, auth failure).
	closeAfter bool
	// enc and start belong to the frame between begin and end.
	enc   wire.Encoder
	start int
}

func newOutbuf(limit int) *outbuf {
	return &outbuf{limit: limit, wake: make(chan struct{}, 1)}
}

// frame appends one length-prefixed frame built by fill. It returns false
// if the connection is closed or went over its limit.
func (o *outbuf) frame(fill func(e *wire.Encoder)) bool {
	e := o.begin()
	if e == nil {
		return false
	}
	fill(e)
	return o.end()
}

// begin locks the buffer and reserves a frame's length prefix; the caller
// encodes the frame into the returned encoder and calls end. It returns
// nil if the connection is closed.
func (o *outbuf) begin() *wire.Encoder {
	o.mu.Lock()
	if o.closed || o.closeAfter {
		o.mu.Unlock()
		return nil
	}
	o.enc.B = append(o.buf, 0, 0, 0, 0)
	o.start = len(o.enc.B) - 4
	return &o.enc
}

// end patches the frame length, publishes the frame and unlocks.
func (o *outbuf) end() bool {
	e := &o.enc
	binary.BigEndian.PutUint32(e.B[o.start:], uint32(len(e.B)-o.start-4))
	o.buf = e.B
	e.B = nil
	o.frames++
	over := len(o.buf) > o.limit
	if over {
		o.closed = true
		o.err = errOutputFull
	}
	o.mu.Unlock()
	o.signal()
	return !over
}

// raw appends bytes that are not a frame (four-letter-word output).
func (o *outbuf) raw(b []byte) {
	o.mu.Lock()
	if !o.closed {
		o.buf = append(o.buf, b...)
	}
	o.mu.Unlock()
	o.signal()
}

// finish asks the writer to close the connection once what is queued has
// been written.
func (o *outbuf) finish() {
	o.mu.Lock()
	o.closeAfter = true
	o.mu.Unlock()
	o.signal()
}

// close stops the writer at once; queued output is dropped.
func (o *outbuf) close(err error) {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		o.err = err
	}
	o.mu.Unlock()
	o.signal()
}

func (o *outbuf) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run writes queued output to w until the buffer is closed or a write
// fails. onWrite is told how many frames each write carried.
func (o *outbuf) run(w io.Writer, onWrite func(frames int)) error {
	for {
		<-o.wake
		for {
			o.mu.Lock()
			if o.closed {
				err := o.err
				o.mu.Unlock()
				return err
			}
			if len(o.buf) == 0 {
				done := o.closeAfter
				o.mu.Unlock()
				if done {
					return nil
				}
				break
			}
			out := o.buf
			n := o.frames
			o.buf, o.spare = o.spare[:0], nil
			o.frames = 0
			o.mu.Unlock()
			if _, err := w.Write(out); err != nil {
				o.close(err)
				return err
			}
			if onWrite != nil {
				onWrite(n)
			}
			o.mu.Lock()
			if cap(out) <= 1<<20 {
				o.spare = out[:0]
			}
			o.mu.Unlock()
		}
	}
}
