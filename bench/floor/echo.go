package floor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"time"
)

// EchoPeer starts the far end of the idle round trips: something that
// accepts one TCP connection on 127.0.0.1 and writes back every size-byte
// message it reads. It returns the address to dial and a stop function
// that ends the peer once the connection is closed and reports what went
// wrong with it.
type EchoPeer func(ctx context.Context, size int) (addr string, stop func() error, err error)

// InProcessEcho is an EchoPeer in a goroutine of this process: what the
// hot round trips use, and the idle ones when no other process can be
// started (tests, a bench binary that cannot run itself).
func InProcessEcho(_ context.Context, size int) (string, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("bench: loopback echo: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- echo(ln, size) }()
	return ln.Addr().String(), func() error {
		ln.Close() // ends an Accept that never got its connection
		return <-done
	}, nil
}

// echoWait bounds how long a peer process may take to print its address
// and to exit once its connection is closed.
const echoWait = 10 * time.Second

// ProcessEcho is an EchoPeer in a process of its own: name with args,
// which must serve as ServeEcho does (print the address on a line of its
// standard output, echo one connection, exit when it closes). A server's
// messages cross between processes, each asleep until its peer's write
// wakes it; an echo in the prober's own process can be caught by the Go
// runtime's spinning threads and returns sooner than any server could.
func ProcessEcho(name string, args ...string) EchoPeer {
	return func(ctx context.Context, size int) (string, func() error, error) {
		cmd := exec.CommandContext(ctx, name, append(args, fmt.Sprint(size))...)
		cmd.WaitDelay = echoWait
		out, err := cmd.StdoutPipe()
		if err != nil {
			return "", nil, fmt.Errorf("bench: echo process: %w", err)
		}
		var stderr strings.Builder
		cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
		if err := cmd.Start(); err != nil {
			return "", nil, fmt.Errorf("bench: echo process: %w", err)
		}
		stop := func() error {
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("bench: echo process %s: %w (%s)", name, err, strings.TrimSpace(stderr.String()))
			}
			return nil
		}
		line := make(chan string, 1)
		go func() {
			s, _ := bufio.NewReader(io.LimitReader(out, 256)).ReadString('\n')
			line <- strings.TrimSpace(s)
			io.Copy(io.Discard, out) // anything more, until it exits
		}()
		var addr string
		select {
		case addr = <-line:
		case <-time.After(echoWait):
		case <-ctx.Done():
		}
		if _, _, err := net.SplitHostPort(addr); err != nil || addr == "" {
			cmd.Process.Kill()
			werr := stop()
			return "", nil, fmt.Errorf("bench: echo process %s printed no address (%q): %w", name, addr, errors.Join(ctx.Err(), werr))
		}
		return addr, stop, nil
	}
}

// ServeEcho is the far end ProcessEcho starts: it listens on 127.0.0.1,
// writes the address and a newline to w, serves one connection with
// size-byte echoes until its peer closes it, and returns. It gives up
// after echoWait without a connection.
func ServeEcho(w io.Writer, size int) error {
	if size < 1 || size > 1<<20 {
		return fmt.Errorf("bench: echo: message size %d out of range [1, %d]", size, 1<<20)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("bench: echo: %w", err)
	}
	defer ln.Close()
	if tl, ok := ln.(*net.TCPListener); ok {
		tl.SetDeadline(time.Now().Add(echoWait))
	}
	if _, err := fmt.Fprintln(w, ln.Addr().String()); err != nil {
		return fmt.Errorf("bench: echo: %w", err)
	}
	return echo(ln, size)
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
