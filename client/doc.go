// Package client is a Go client for any server that speaks ZooKeeper's
// client protocol: corral or Apache ZooKeeper (3.5 and later; persistent
// watches need 3.6).
//
//	c, err := client.Connect(ctx, []string{"127.0.0.1:2181"},
//		client.SessionTimeout(10*time.Second))
//	...
//	defer c.Close()
//	path, err := c.Create(ctx, "/app", []byte("v1"), client.WorldACL(client.PermAll), client.ModePersistent)
//	data, stat, err := c.Get(ctx, "/app")
//	if errors.Is(err, wire.CodeNoNode) { ... }
//
// # Calls
//
// Every operation of the protocol has a blocking method taking a context
// (Create, Create2, CreateTTL, CreateContainer, Delete, Exists, Get, Set,
// GetACL, SetACL, Children, Children2, Sync, Check, Multi, MultiRead,
// GetAllChildrenNumber, GetEphemerals, AddWatch, RemoveWatches,
// CheckWatches, AddAuth, WhoAmI, GetConfig, Reconfig, SASL; ping,
// setWatches and closeSession are sent by the client itself; Check is sent
// as a one-op multi, the only form ZooKeeper accepts). The data operations also
// have an Async form returning a Future. Replies, completions of blocking
// calls and futures all happen in the order the calls were made on the
// Conn, which is ZooKeeper's FIFO client order: a read issued after a
// write (from the same goroutine, or ordered after it) sees that write.
//
// Requests are pipelined: any number may be in flight on the one TCP
// connection (up to MaxInFlight). There is no goroutine or timer per
// request. One writer goroutine takes everything queued and sends it with
// a single write; one reader goroutine matches replies against the FIFO
// of sent requests (ZooKeeper answers in request order; notifications and
// pings carry special xids and are handled aside; auth and SASL replies,
// which ZooKeeper sends as soon as it reads the request, are matched out
// of band and still complete in call order).
// Requests are pooled, so a Get allocates only the data it returns.
//
// # Errors
//
// A server error is returned as its wire.Code: errors.Is(err,
// wire.CodeNoNode), or err == wire.CodeNoNode. The client's own failures
// are ErrConnectionLoss (the request may or may not have executed; a
// write is never retried behind the caller's back), ErrSessionExpired,
// ErrClosed and ErrAuthFailed; each wraps the ZooKeeper code the Java
// client reports for the same case, so errors.Is(err,
// wire.CodeConnectionLoss) holds for ErrConnectionLoss. A context that
// ends first returns ctx.Err(): the request is dropped if it had not been
// written yet, otherwise it may still execute.
//
// # Connection and session
//
// Connect shuffles the server list and connects to the first server that
// accepts the session. The client sends a ping after the negotiated
// timeout/3 without sending anything, and if it hears nothing from the
// server for 2/3 of the timeout it drops the connection and moves on to
// the next server, presenting the session id, password and the last zxid
// it has seen (a server that has not caught up refuses it). On the new
// connection it first re-sends its credentials (AuthDigest, Auth,
// successful AddAuth), then re-registers every watch with SetWatches /
// SetWatches2 relative to that zxid (split into frames of ~128 KB of
// paths), and only then sends the calls that were queued meanwhile.
//
// Calls made while disconnected wait in the queue for the next connection
// (bounded by their context), unless the client has been disconnected for
// a whole session timeout, in which case they fail with
// ErrConnectionLoss until a connection is back. Requests already sent
// when a connection breaks fail with ErrConnectionLoss.
//
// If the server reports the session expired, the Conn is dead: every call
// fails with ErrSessionExpired, watches end, and the application must
// Connect again. Close closes the session on the server (deleting its
// ephemeral nodes) after the calls made before it complete.
//
// # Events
//
// Session events (Connected, Disconnected, Expired, AuthFailed, Closed)
// go to the EventCallback option, synchronously and in order, and to the
// bounded Events channel, which drops an event when full (State is always
// current).
//
// ExistsW, GetW, ChildrenW, Children2W and GetConfigW set one-shot
// watches: the returned channel (capacity 1) receives one event and is
// closed, or receives EventNotWatching when the session expires or the
// Conn closes. AddWatch sets a persistent (optionally recursive) watch
// whose Watcher channel receives every event until Remove; see Watcher
// for its backpressure. Watch events are delivered in the order the
// server sent them, and before the completion of any call whose reply
// the server sent after them: when a call returns, every event that
// preceded its reply is already in its channel.
//
// # Paths and chroot
//
// Paths are absolute ("/a/b"). With a chroot ("host:port/app" or the
// Chroot option) every path is relative to it, including the paths in
// results and events. The server validates paths and answers
// wire.CodeBadArguments as ZooKeeper does.
//
// Files: conn.go (Conn, submission, completion), session.go (connection
// life cycle), link.go (reader, writer), fifo.go (sent requests),
// slots.go (MaxInFlight),
// watches.go (watch registry, Watcher), ops.go, ops_session.go, multi.go
// (operations), request.go, future.go, servers.go, options.go, types.go,
// errors.go.
package client
