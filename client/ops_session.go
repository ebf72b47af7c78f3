package client

import (
	"context"
	"errors"

	"github.com/corral-db/corral/wire"
)

// Operations about the session, its identity, watches and the ensemble.

// ConfigPath is the node holding the ensemble configuration; GetConfig
// reads it outside any chroot.
const ConfigPath = "/zookeeper/config"

// AddAuth adds a credential to the connection (digest: "user:password").
// The server checks it at once: on success it is remembered and re-sent
// on every later connection, before any other request; a refused one
// returns wire.CodeAuthFailed, and ZooKeeper then closes the connection,
// so calls in flight at that moment fail with ErrConnectionLoss while the
// client reconnects (without the refused credential).
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	r := c.newRequest(wire.OpAuth)
	cred := credential{scheme, append([]byte(nil), auth...)}
	r.body = &wire.AuthPacket{Scheme: cred.scheme, Auth: cred.auth}
	r.after = func(c *Conn, r *request) {
		if r.err == nil {
			c.mu.Lock()
			c.creds = append(c.creds, cred)
			c.mu.Unlock()
		}
	}
	_, err := call(ctx, c, r, convErr)
	return err
}

// WhoAmI lists the identities the connection is authenticated as
// (ZooKeeper includes ("ip", address)).
func (c *Conn) WhoAmI(ctx context.Context) ([]ClientInfo, error) {
	r := c.newRequest(wire.OpWhoAmI)
	r.reply = &wire.WhoAmIResponse{}
	return call(ctx, c, r, func(_ *Conn, r *request) ([]ClientInfo, error) {
		if r.err != nil {
			return nil, r.err
		}
		return r.reply.(*wire.WhoAmIResponse).ClientInfo, nil
	})
}

// GetEphemerals lists the paths of this session's ephemeral nodes whose
// path starts with prefix ("/" or "" for all), relative to the chroot.
func (c *Conn) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		prefix = "/"
	}
	sp, err := c.serverPath(prefix)
	if err != nil {
		return nil, err
	}
	r := c.newRequest(wire.OpGetEphemerals)
	r.body = &wire.GetEphemeralsRequest{PrefixPath: sp}
	r.reply = &wire.GetEphemeralsResponse{}
	return call(ctx, c, r, func(c *Conn, r *request) ([]string, error) {
		if r.err != nil {
			return nil, r.err
		}
		all := r.reply.(*wire.GetEphemeralsResponse).Ephemerals
		out := make([]string, 0, len(all))
		for _, p := range all {
			// A textual prefix may match outside the chroot ("/app" matches
			// "/apple"); keep only what lies inside.
			if c.inChroot(p) {
				out = append(out, c.clientPath(p))
			}
		}
		return out, nil
	})
}

// GetAllChildrenNumber counts all descendants of a node (not the node).
func (c *Conn) GetAllChildrenNumber(ctx context.Context, path string) (int, error) {
	r, err := c.pathReq(wire.OpGetAllChildrenNumber, path)
	if err != nil {
		return 0, err
	}
	r.reply = &wire.GetAllChildrenNumberResponse{}
	return call(ctx, c, r, func(_ *Conn, r *request) (int, error) {
		if r.err != nil {
			return 0, r.err
		}
		return int(r.reply.(*wire.GetAllChildrenNumberResponse).TotalNumber), nil
	})
}

// AddWatch sets a persistent watch on path (addWatch): it fires for every
// change of the node and of its children list (NodeChildrenChanged) until
// removed. With recursive, it fires for the node and every descendant,
// without NodeChildrenChanged. See Watcher.
func (c *Conn) AddWatch(ctx context.Context, path string, recursive bool) (*Watcher, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	w := &Watcher{c: c, path: path, spath: sp, recursive: recursive,
		ch: make(chan Event, c.cfg.watcherBuffer), stop: make(chan struct{})}
	mode := wire.AddWatchPersistent
	if recursive {
		mode = wire.AddWatchPersistentRecursive
	}
	r := c.newRequest(wire.OpAddWatch)
	r.body = &wire.AddWatchRequest{Path: sp, Mode: mode}
	// The reply body (ErrorResponse{0}) carries nothing.
	r.after = func(c *Conn, r *request) {
		if r.err != nil {
			return
		}
		g := &c.watches
		g.mu.Lock()
		if !w.orphaned {
			if recursive {
				g.recursive[sp] = append(g.recursive[sp], w)
			} else {
				g.persistent[sp] = append(g.persistent[sp], w)
			}
		}
		g.mu.Unlock()
	}
	if _, err := call(ctx, c, r, convErr); err != nil {
		// The request may still be answered after the caller gave up (its
		// context ended): keep the handle nobody holds out of the tables.
		g := &c.watches
		g.mu.Lock()
		w.orphaned = true
		m := g.persistent
		if recursive {
			m = g.recursive
		}
		ws := m[sp]
		for i := range ws {
			if ws[i] == w {
				m[sp] = append(ws[:i:i], ws[i+1:]...)
				if len(m[sp]) == 0 {
					delete(m, sp)
				}
				break
			}
		}
		g.mu.Unlock()
		return nil, err
	}
	return w, nil
}

// RemoveWatches removes this client's watches of type t on path, on the
// server and locally: one-shot watch channels receive DataWatchRemoved or
// ChildWatchRemoved and are closed; persistent Watchers are closed with
// Err ErrWatchRemoved. The server answers wire.CodeNoWatcher when it had
// none (local watches are removed anyway).
func (c *Conn) RemoveWatches(ctx context.Context, path string, t WatcherType) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	r := c.newRequest(wire.OpRemoveWatches)
	r.body = &wire.RemoveWatchesRequest{Path: sp, Type: int32(t)}
	r.after = func(c *Conn, r *request) {
		if r.err == nil || errors.Is(r.err, wire.CodeNoWatcher) {
			c.watches.removeLocal(c, sp, t)
		}
	}
	_, err = call(ctx, c, r, convErr)
	return err
}

// CheckWatches asks the server whether this connection has a watch of
// type t on path: nil if so, wire.CodeNoWatcher if not.
func (c *Conn) CheckWatches(ctx context.Context, path string, t WatcherType) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	r := c.newRequest(wire.OpCheckWatches)
	r.body = &wire.CheckWatchesRequest{Path: sp, Type: int32(t)}
	_, err = call(ctx, c, r, convErr)
	return err
}

// GetConfig reads the ensemble configuration (/zookeeper/config, outside
// the chroot).
func (c *Conn) GetConfig(ctx context.Context) ([]byte, Stat, error) {
	r := c.configReq(wkNone)
	res, err := call(ctx, c, r, convGet)
	return res.Data, res.Stat, err
}

// GetConfigW is GetConfig with a one-shot data watch; its events carry
// the path ConfigPath.
func (c *Conn) GetConfigW(ctx context.Context) ([]byte, Stat, <-chan Event, error) {
	r := c.configReq(wkData)
	res, err := call(ctx, c, r, convGetW)
	return res.v.Data, res.v.Stat, res.ch, err
}

func (c *Conn) configReq(kind watchKind) *request {
	r := c.newRequest(wire.OpGetData)
	r.pw = wire.PathWatchRequest{Path: ConfigPath, Watch: kind != wkNone}
	r.body = &r.pw
	r.reply = &r.dataR
	if kind != wkNone {
		r.watch = watchSpec{kind: kind, path: ConfigPath, ch: make(chan Event, 1)}
		r.after = registerWatch
	}
	return r
}

// Reconfig changes the ensemble membership (incrementally with joining
// and leaving, or wholesale with newMembers; comma-separated server
// specs) if the configuration version is still fromConfig (-1: any). It
// returns the new configuration. ZooKeeper answers
// wire.CodeReconfigDisabled unless reconfigEnabled is set, and needs
// WRITE permission on /zookeeper/config (in practice the super user).
func (c *Conn) Reconfig(ctx context.Context, joining, leaving, newMembers string, fromConfig int64) ([]byte, Stat, error) {
	r := c.newRequest(wire.OpReconfig)
	r.body = &wire.ReconfigRequest{JoiningServers: joining, LeavingServers: leaving,
		NewMembers: newMembers, CurConfigID: fromConfig}
	r.reply = &r.dataR
	res, err := call(ctx, c, r, convGet)
	return res.Data, res.Stat, err
}

// SASL sends one SASL token (op 102) and returns the server's challenge.
// The client implements no SASL mechanism itself; this is the transport
// for a caller that does. A server without SASL configured answers with an
// empty token.
func (c *Conn) SASL(ctx context.Context, token []byte) ([]byte, error) {
	r := c.newRequest(wire.OpSASL)
	r.body = &wire.GetSASLRequest{Token: token}
	r.reply = &wire.SetSASLResponse{}
	return call(ctx, c, r, func(_ *Conn, r *request) ([]byte, error) {
		if r.err != nil {
			return nil, r.err
		}
		return r.reply.(*wire.SetSASLResponse).Token, nil
	})
}
