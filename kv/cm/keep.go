package cm

import (
	"context"
	"log/slog"
	"time"

	"github.com/corral-db/corral/client"
)

// SessionTimeout is the session timeout Keep asks the CM for.
const SessionTimeout = 10 * time.Second

// Keep keeps a session with the configuration manager at servers and a
// View of the configuration under root on it, until ctx ends. For each
// session it calls use with a Store and a View on it; use must return
// once its ctx ends, which happens when the View stops (the session
// expired or closed). Keep then connects again: persistent watches and
// the session's state do not outlive an expiry. Failures to connect are
// retried after retryDelay, doubling to 5 s.
func Keep(ctx context.Context, servers []string, root string, log *slog.Logger, use func(ctx context.Context, s *Store, v *View)) {
	delay := retryDelay
	for ctx.Err() == nil {
		conn, err := client.Connect(ctx, servers, client.SessionTimeout(SessionTimeout), client.Logger(log))
		if err == nil {
			var s *Store
			var v *View
			if s, err = NewStore(conn, root); err == nil {
				v, err = Watch(ctx, conn, root)
			}
			if err == nil {
				delay = retryDelay
				sctx, cancel := context.WithCancel(ctx)
				stop := context.AfterFunc(ctx, cancel)
				go func() {
					<-v.Done()
					cancel()
				}()
				use(sctx, s, v)
				cancel()
				stop()
				v.Close()
				if ctx.Err() == nil {
					log.Warn("cm: session ended; connecting again", "err", v.Err())
				}
			}
			conn.Close()
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("cm: cannot follow the configuration", "servers", servers, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}
