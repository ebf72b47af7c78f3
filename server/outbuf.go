package server

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/corral-db/corral/internal/probe"
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
//
// Others may write instead (hold, then release or tryRelease): while the
// connection's reader runs a write to completion (Server.runToCompletion),
// or the apply goroutine answers a batch, the writer is not woken, and
// the holder then writes the replies itself, so a reply costs no wake-up
// of the writer goroutine. The reader's write may block (only its own
// connection waits); apply's never does (tryRelease).
type outbuf struct {
	mu     sync.Mutex
	buf    []byte
	spare  []byte
	limit  int
	closed bool
	err    error
	// frames counts frames queued since the writer last swapped.
	frames int
	// held counts holders that will write or hand over what is queued
	// (release, tryRelease); end does not wake the writer meanwhile.
	held int
	// writing: a write is in progress, by the writer or the reader; the
	// other leaves the buffer alone until it ends, which keeps frames in
	// order.
	writing bool
	wake    chan struct{}
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
	wake := o.held == 0 || over
	o.mu.Unlock()
	if wake {
		o.signal()
	}
	return !over
}

// hold tells end not to wake the writer: the caller calls release or
// tryRelease when it is done answering.
func (o *outbuf) hold() {
	o.mu.Lock()
	o.held++
	o.mu.Unlock()
}

// unhold ends a hold; it reports whether the caller was the last holder
// and there is something to write. The caller holds mu.
func (o *outbuf) unhold() bool {
	if o.held == 0 {
		return false
	}
	o.held--
	return o.held == 0 && (len(o.buf) > 0 || o.closeAfter || o.closed)
}

// release ends a hold: it writes what is queued to w itself, unless a
// write is already in progress, in which case the writer (which loops
// until the buffer is empty) takes it. Nothing that can block may run
// between hold and release: replies other goroutines queue meanwhile wait
// for it.
func (o *outbuf) release(w io.Writer, onWrite func(frames int)) {
	o.mu.Lock()
	if !o.unhold() {
		o.mu.Unlock()
		return
	}
	if o.writing || o.closed || len(o.buf) == 0 {
		o.mu.Unlock()
		o.signal()
		return
	}
	out, n := o.take()
	o.mu.Unlock()
	if _, err := w.Write(out); err != nil {
		o.close(err)
		return
	}
	probe.Mark("c-reply-written-rd", 0)
	o.wrote(out, n, onWrite)
}

// wrote ends a holder's write of all of out (n frames): it counts them
// and wakes the writer for whatever was queued meanwhile.
func (o *outbuf) wrote(out []byte, n int, onWrite func(frames int)) {
	if onWrite != nil {
		onWrite(n)
	}
	o.mu.Lock()
	more := o.written(out)
	o.mu.Unlock()
	if more {
		o.signal()
	}
}

// tryRelease ends a hold like release, but writes with at most one
// non-blocking system call (write): what the socket does not take at once
// goes back to the front of the queue for the writer goroutine, so the
// caller (the apply goroutine, answering many connections) never waits
// on a client that reads slowly.
func (o *outbuf) tryRelease(write func([]byte) (int, error), onWrite func(frames int)) {
	o.mu.Lock()
	if !o.unhold() {
		o.mu.Unlock()
		return
	}
	if o.writing || o.closed || o.closeAfter || len(o.buf) == 0 {
		o.mu.Unlock()
		o.signal()
		return
	}
	out, n := o.take()
	o.mu.Unlock()
	k, err := write(out)
	if err != nil {
		o.close(err)
		return
	}
	if k == len(out) {
		probe.Mark("c-reply-written-ap", 0)
		o.wrote(out, n, onWrite)
		return
	}
	// The socket took k bytes (perhaps none): the rest goes first.
	o.mu.Lock()
	o.writing = false
	rest := make([]byte, 0, len(out)-k+len(o.buf))
	rest = append(append(rest, out[k:]...), o.buf...)
	o.buf = rest
	o.frames += n
	o.mu.Unlock()
	o.signal()
}

// take swaps the queued output out for writing; the caller holds mu.
func (o *outbuf) take() ([]byte, int) {
	out, n := o.buf, o.frames
	o.buf, o.spare = o.spare[:0], nil
	o.frames = 0
	o.writing = true
	return out, n
}

// written ends a write of out, keeping out for reuse; the caller holds
// mu. It reports whether the writer has more to do.
func (o *outbuf) written(out []byte) bool {
	o.writing = false
	if cap(out) <= 1<<20 {
		o.spare = out[:0]
	}
	return len(o.buf) > 0 || o.closeAfter || o.closed
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
			if o.writing {
				// The reader is writing; it wakes us if more is queued.
				o.mu.Unlock()
				break
			}
			if len(o.buf) == 0 {
				done := o.closeAfter
				o.mu.Unlock()
				if done {
					return nil
				}
				break
			}
			out, n := o.take()
			o.mu.Unlock()
			if _, err := w.Write(out); err != nil {
				o.close(err)
				return err
			}
			probe.Mark("c-reply-written", 0)
			if onWrite != nil {
				onWrite(n)
			}
			o.mu.Lock()
			o.written(out)
			o.mu.Unlock()
		}
	}
}
