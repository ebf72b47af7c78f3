package load

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// runSequential drives a connection that keeps one request outstanding in
// Closed loop the way a synchronous client does: the goroutine that writes
// a request reads its reply, then writes the next. run's writer and reader
// pair adds a goroutine hand-off to every request (the reader wakes the
// writer, which then writes): against one standalone server, alternating
// the two loops, a sequential create's p50 was 0.209-0.256 ms through the
// pair and 0.188-0.201 ms through this loop (BENCHMARKS.md), time that
// belongs to neither server. Both targets of a comparison are measured
// through the same loop.
//
// Nothing is outstanding between requests, so the session needs no pings:
// every request renews it.
func (c *Conn) runSequential(ctx context.Context, src source, w *Window) (ConnStats, error) {
	st := ConnStats{Hist: stats.NewHist()}
	parent := ctx
	ctx, _, done := c.bound(ctx, w)
	defer done()

	err := c.sequentialLoop(src, w, &st)
	switch {
	case err == nil:
		return st, nil
	case parent.Err() != nil:
		return st, parent.Err()
	case errors.Is(context.Cause(ctx), ErrStalled):
		return st, ErrStalled
	}
	return st, err
}

func (c *Conn) sequentialLoop(src source, w *Window, st *ConnStats) error {
	var e wire.Encoder
	var hdr [4 + ReplyHeaderSize]byte
	for {
		sent := time.Now()
		if !sent.Before(w.End) {
			break
		}
		n, last := w.take(1)
		if n == 0 {
			break
		}
		xid := c.NextXid()
		e.Reset()
		src.Next(&e, xid)
		if _, err := c.NetConn.Write(e.B); err != nil {
			return err
		}
		st.writes++
		st.requests++
		h, err := c.readReply(xid, &hdr)
		if err != nil {
			return err
		}
		now := time.Now()
		if w.replies != nil {
			w.replies.Add(1)
		}
		st.record(h, sent, now, w)
		if last {
			break
		}
	}
	xid := c.NextXid()
	e.Reset()
	appendCloseSession(&e, xid)
	if _, err := c.NetConn.Write(e.B); err != nil {
		return err
	}
	_, err := c.readReply(xid, &hdr)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// The server closed the connection on closeSession without
		// replying; every request was answered.
		return nil
	}
	return err
}

// readReply reads replies until the one to xid, skipping pings and watch
// notifications, and returns its header; the body is discarded.
func (c *Conn) readReply(xid int32, hdr *[4 + ReplyHeaderSize]byte) (replyHeader, error) {
	for {
		h, err := c.readReplyHeader(hdr)
		if err != nil {
			return h, err
		}
		switch h.Xid {
		case wire.XidPing, wire.XidNotification:
			continue
		case xid:
			return h, nil
		}
		return h, errXid(h.Xid, xid)
	}
}
