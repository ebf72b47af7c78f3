package floor

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

// pingPong is the network half of the floor: one TCP connection on
// 127.0.0.1, a message of size bytes sent and echoed back rounds times.
// It returns each round trip's latency.
func pingPong(ctx context.Context, rounds, size int) (*stats.Hist, error) {
	if rounds < 1 || size < 1 {
		return nil, fmt.Errorf("bench: loopback probe needs rounds and a message size (got %d, %d)", rounds, size)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: loopback probe: %w", err)
	}
	defer ln.Close()
	echoed := make(chan error, 1)
	go func() { echoed <- echo(ln, size) }()

	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return nil, fmt.Errorf("bench: loopback probe: %w", err)
	}
	// Closing the connection ends the echo; a context ending mid-run
	// unblocks the reads through the deadline.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	hist := stats.NewHist()
	msg := make([]byte, size)
	back := make([]byte, size)
	for i := 0; i < rounds; i++ {
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			c.Close()
			return hist, fmt.Errorf("bench: loopback probe: %w", err)
		}
		if _, err := io.ReadFull(c, back); err != nil {
			c.Close()
			return hist, fmt.Errorf("bench: loopback probe: %w", err)
		}
		hist.Record(time.Since(start))
	}
	c.Close()
	if err := <-echoed; err != nil {
		return hist, err
	}
	return hist, ctx.Err()
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
