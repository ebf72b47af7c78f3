// Package kvclient is the Go client of corral's key-value store (the gRPC
// service of api/kv/v1). It sends every call to the replica group's
// leader: a member that does not lead answers UNAVAILABLE with a
// NotLeader detail naming the leader, and the client follows it at once
// (one extra round trip). Calls that fail because a member is down or
// no leader is known are retried on the next endpoint with a short
// backoff until the call's deadline (Config.RequestTimeout when the
// context has none).
//
//	c, err := kvclient.New(kvclient.Config{Endpoints: []string{"127.0.0.1:7000"}})
//	_, err = c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte("r"), Cells: ...})
//
// Retries: UNAVAILABLE (a member down, not the leader, no leader known)
// and ABORTED (leadership lost after the write was proposed) are retried
// for every call until its deadline, and so is a connection cut after a
// request was sent. Writes are safe to retry because each carries a
// request id (RequestId: a client id and a sequence), which the group
// applies at most once: a repeat is answered with the first attempt's
// result. The client takes the id from a lane (a random client id and
// its next sequence) held by one write at a time, so concurrent writes
// use different lanes; a request id the caller sets is sent as is. A
// write that runs out of time may still apply afterwards (its outcome is
// unknown to the caller); once the lane's next write has applied, the
// group refuses the old one (FAILED_PRECONDITION).
//
// Coalescing (coalesce.go): concurrent Gets of one table with the same
// read options, bound for one replica group, are sent together. A Get
// whose line is free goes at once, alone; Gets arriving while a call of
// the line is in flight wait, and leave as one MultiGet when it
// completes (send when the line is free, without a timer), retried and
// routed as a MultiGet is. Each Get gets its own row, NotFound, or the
// batch's error, and leaves on its own context. Config.NoCoalesce turns
// it off.
//
// Sharded clusters: on first use the client asks an endpoint (the Cluster
// call) whether it belongs to one. If so it reads the ring and the RGs'
// leaders from the configuration manager and keeps them current with one
// persistent recursive watch (kv/cm, kv/route), sends each row request to
// the owning RG's leader, re-routes on NotLeader or WrongRange in one
// round trip, splits multi-gets by RG, merges scans over every RG and
// applies table operations to every RG (sharded.go). Config.Forward
// leaves row requests to the nodes' server-side forwarding instead.
package kvclient
