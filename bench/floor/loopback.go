package floor

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

// pingPong is the network half of the floor: one TCP connection to the
// echo peer at addr, a message of size bytes sent and echoed back rounds
// times, each round after a pause of gap (none if zero). It returns each
// round trip's latency.
//
// The pause is a busy wait: time.Sleep wakes on the runtime's timer, a
// millisecond late here, and the point is a peer idle for about as long
// as a server's members are between the messages of one sequential write.
func pingPong(ctx context.Context, addr string, rounds, size int, gap time.Duration) (*stats.Hist, error) {
	if rounds < 1 || size < 1 {
		return nil, fmt.Errorf("bench: loopback probe needs rounds and a message size (got %d, %d)", rounds, size)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("bench: loopback probe: %w", err)
	}
	defer c.Close() // ends the echo
	// A context ending mid-run unblocks the reads through the deadline.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	hist := stats.NewHist()
	msg := make([]byte, size)
	back := make([]byte, size)
	for i := 0; i < rounds; i++ {
		if gap > 0 {
			for until := time.Now().Add(gap); time.Now().Before(until) && ctx.Err() == nil; {
			}
		}
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			return hist, fmt.Errorf("bench: loopback probe: %w", err)
		}
		if _, err := io.ReadFull(c, back); err != nil {
			return hist, fmt.Errorf("bench: loopback probe: %w", err)
		}
		hist.Record(time.Since(start))
	}
	return hist, ctx.Err()
}

// roundTrips runs pingPong against a peer started by start and stops it.
func roundTrips(ctx context.Context, start EchoPeer, rounds, size int, gap time.Duration) (*stats.Hist, error) {
	addr, stop, err := start(ctx, size)
	if err != nil {
		return nil, err
	}
	h, err := pingPong(ctx, addr, rounds, size, gap)
	if err != nil {
		stop()
		return h, err
	}
	// pingPong closed the connection: the peer returns.
	return h, stop()
}

// echo accepts one connection and writes back every size-byte message it
// reads, until the peer closes it.
func echo(ln net.Listener, size int) error {
	c, err := ln.Accept()
	if err != nil {
		return fmt.Errorf("bench: loopback echo: %w", err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	buf := make([]byte, size)
	for {
		// The prober closing (or timing out) ends the loop; its own error
		// says what went wrong.
		if _, err := io.ReadFull(c, buf); err != nil {
			return nil
		}
		if _, err := c.Write(buf); err != nil {
			return nil
		}
	}
}
