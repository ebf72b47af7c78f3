package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
)

// TestAbandonedAddWatchDoesNotStall: an AddWatch whose context ends after
// the request was sent returns an error, so nobody holds its Watcher. When
// the server's answer comes later, the client must not start feeding that
// Watcher: once its small buffer filled, the reader would block and the
// connection would stall.
func TestAbandonedAddWatchDoesNotStall(t *testing.T) {
	srv := start(t)
	c := connect(t, srv.Addr(), client.WatcherBuffer(2), client.SessionTimeout(20*time.Second))
	other := connect(t, srv.Addr())
	ctx := testCtx(t)
	root := mkroot(t, c)
	p := root + "/w"
	_, err := c.Create(ctx, p, nil, open, client.ModePersistent)
	ok(t, err)

	// Pause the server so the AddWatch's context ends before its reply.
	// A signal can lose the race with a request already in flight, so try
	// a few times; the assertion below is about what happens afterwards.
	abandoned := false
	for attempt := 0; attempt < 5 && !abandoned; attempt++ {
		srv.memberOf(c).Pause()
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := c.AddWatch(short, p, false)
		cancel()
		srv.memberOf(c).Resume()
		if err != nil {
			abandoned = true
		} else {
			ok(t, c.RemoveWatches(ctx, p, client.WatchAny))
		}
	}
	if !abandoned {
		t.Skip("could not make an AddWatch outlive its context")
	}
	for i := 0; i < 10; i++ {
		_, err := other.Set(ctx, p, []byte{byte(i)}, -1)
		ok(t, err)
	}
	get, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, _, err := c.Get(get, p); err != nil {
		t.Fatalf("connection stalled after an abandoned AddWatch: %v", err)
	}
}
