package load

import (
	"context"
	"io"
	"net"
	"time"
)

// FourLetter sends a four-letter word and returns the server's answer (the
// server closes the connection after it).
func FourLetter(ctx context.Context, addr, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	if _, err := io.WriteString(nc, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(nc, 1<<20))
	return string(b), err
}
