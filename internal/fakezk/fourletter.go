package fakezk

import (
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
		// Every request is an unexpected op.
		handle: func(int64, int32, wire.Op, *wire.Decoder) (wire.Code, func(*wire.Encoder), bool) {
			return 0, nil, false
		},
	}
	l.listen(t, true)
	return l.addr()
}
