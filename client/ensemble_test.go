package client_test

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
)

// TestSessionMovesAtOnce (ensemble only: CORRAL_E2E_ENSEMBLE): a session
// whose connect reply the client has is committed, so the client may
// take it to any other member at once, before that member has heard of
// it from the leader, and find it valid: ZooKeeper's member asks the
// leader rather than judge by its own, possibly lagging, copy. Each round
// opens a session, drops its connection right away and lets the client
// move on (every round shuffles the members differently, so the moves
// cover leader and followers both ways).
func TestSessionMovesAtOnce(t *testing.T) {
	if ensembleSize(t) == 0 {
		t.Skip("needs an ensemble to move between members (set CORRAL_E2E_ENSEMBLE=3)")
	}
	srv := start(t)
	const rounds = 60
	for i := range rounds {
		g := newGate()
		events := make(chan client.Event, 64)
		seed := uint64(i) + 1
		var mu sync.Mutex
		var dialed []string // every member the client dialed, in order
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return g.dial(ctx, network, addr)
		}
		c := connect(t, srv.Addr(), client.Dialer(dial), client.Rand(rand.New(rand.NewPCG(seed, seed))),
			client.EventCallback(func(ev client.Event) {
				select {
				case events <- ev:
				default:
				}
			}))
		first, sid, zxid := c.Server(), c.SessionID(), c.LastZxid()
		waitState(t, events, client.StateConnected)
		g.Drop()
		waitState(t, events, client.StateDisconnected)
		deadline := time.After(waitLimit)
	wait:
		for {
			select {
			case ev := <-events:
				if ev.Type != client.EventSession {
					continue
				}
				switch ev.State {
				case client.StateConnected:
					if c.SessionID() != sid {
						t.Fatalf("round %d: session %#x became %#x", i, sid, c.SessionID())
					}
					break wait
				case client.StateExpired:
					mu.Lock()
					t.Fatalf("round %d: session %#x, created on %s (leader %s; client's last zxid %#x), moved at once (dials %v), and the member it reached says it expired",
						i, sid, first, srv.leaderAddr(), zxid, dialed)
				}
			case <-deadline:
				t.Fatalf("round %d: session %#x not back within %s", i, sid, waitLimit)
			}
		}
		c.Close()
	}
}
