package fakezk

import (
	"fmt"
	"sync"
	"testing"

	"github.com/corral-db/corral/wire"
)

// FourLetter serves a member that only answers four-letter words: every
// word gets text (a member's srvr, say) until the test ends. It returns
// the address. A client that opens a session there instead fails the
// test.
func FourLetter(t *testing.T, text string) string {
	t.Helper()
	var (
		mu       sync.Mutex
		sessions int64
		problems []string
	)
	l := &loop{
		mu: &mu, sessions: &sessions, problems: &problems,
		srvr: func() string { return text },
		answer: func(_ int64, _ int32, op wire.Op, _ []byte) []byte {
			mu.Lock()
			defer mu.Unlock()
			problems = append(problems, fmt.Sprintf("request op %d to a four-letter-word fake", op))
			return nil
		},
	}
	l.listen(t, true)
	return l.addr()
}
