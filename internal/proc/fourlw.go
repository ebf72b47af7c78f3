package proc

import (
	"context"
	"io"
	"net"
	"strings"
	"time"
)

// maxFourLetterReply bounds what FourLetter reads.
const maxFourLetterReply = 4 << 20

// FourLetter sends req (normally four ASCII letters such as "srvr") on a
// new connection to addr and reads until the server closes it, which is
// how ZooKeeper ends every four-letter-word answer. The exchange ends at
// timeout or with ctx.
func FourLetter(ctx context.Context, addr string, req []byte, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := c.SetDeadline(dl); err != nil {
			return "", err
		}
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	if _, err := c.Write(req); err != nil {
		return "", err
	}
	out, err := io.ReadAll(io.LimitReader(c, maxFourLetterReply))
	return string(out), err
}

// SrvrMode is the value of the "Mode:" line of srvr (or stat) output:
// leader, follower, observer, standalone, read-only; "" if there is none
// (ZooKeeper answers "not currently serving requests" before it serves).
func SrvrMode(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
