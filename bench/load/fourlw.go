package load

import (
	"context"
	"time"

	"github.com/corral-db/corral/internal/proc"
)

// FourLetter sends a four-letter word and returns the server's answer (the
// server closes the connection after it) within 5 seconds.
func FourLetter(ctx context.Context, addr, cmd string) (string, error) {
	return proc.FourLetter(ctx, addr, []byte(cmd), 5*time.Second)
}
