package recipes

import (
	"context"
	"log/slog"
	"time"

	"github.com/corral-db/corral/client"
)

// Option configures a recipe.
type Option func(*options)

type options struct {
	acl              []client.ACL
	keepOnDisconnect bool
	logger           *slog.Logger
	cleanupLimit     time.Duration
}

func buildOptions(opts []Option) *options {
	o := &options{cleanupLimit: defaultCleanupLimit}
	for _, f := range opts {
		f(o)
	}
	if o.acl == nil {
		o.acl = client.WorldACL(client.PermAll)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// defaultCleanupLimit bounds how long a recipe keeps trying, in the
// background, to delete a node it no longer wants (an abandoned lock
// request, a lost lock): long enough to ride out a server restart, short
// enough that nothing runs forever. The session's end deletes the node
// anyway, since every such node is ephemeral.
const defaultCleanupLimit = 10 * time.Minute

// WithACL sets the ACL of the nodes a recipe creates (default: world
// readable and writable, ZooKeeper's OPEN_ACL_UNSAFE).
func WithACL(acl []client.ACL) Option {
	return func(o *options) { o.acl = append([]client.ACL(nil), acl...) }
}

// WithLogger receives what the recipe does in the background and cannot
// return to a caller (a failed cleanup). Default: discarded.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// KeepOnDisconnect makes a lock or a leadership survive a lost
// connection: Held.Lost closes only when the session is known to have
// expired (or the Conn is closed, or the node deleted). The default is
// the safe one: Lost closes as soon as the connection drops, because
// from then on the server may expire the session, and let another
// client take the lock, before this client can hear of it (Curator's
// default error policy makes the same choice). Use this option only
// where holding a lock that another client may also hold for a while is
// acceptable.
func KeepOnDisconnect() Option { return func(o *options) { o.keepOnDisconnect = true } }

// background runs f with its own bounded context, for work that must
// outlive the caller's context (deleting a node the caller gave up on).
// It ends when f returns: on success, when the Conn is dead (every call
// then fails at once), or when the limit passes.
func (o *options) background(what string, f func(ctx context.Context) error) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), o.cleanupLimit)
		defer cancel()
		if err := f(ctx); err != nil && !sessionOver(err) {
			o.logger.Warn("recipes: background cleanup failed", "what", what, "err", err)
		}
	}()
}
