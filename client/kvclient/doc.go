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
// is retried for every call. ABORTED (leadership lost after the write was
// proposed: it may or may not have applied) is retried for reads, puts
// and deletes, which are safe to repeat, and returned for check-and-put,
// check-and-delete and the admin calls, whose repetition could report a
// false failure. A connection cut after a request was sent is
// UNAVAILABLE too, so a conditional write retried after it may report a
// condition that its own first attempt broke.
package kvclient
