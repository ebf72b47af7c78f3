package kvpb

// Request metadata (gRPC headers) of the KV API, beside kv.proto.
const (
	// ForwardHeader on a row request (get, put, delete, check-and-put,
	// check-and-delete) asks a node of a sharded cluster to forward it to
	// the owning RG's leader when it cannot serve it itself, instead of
	// answering NotLeader or WrongRange: server-side forwarding, the
	// alternative to client-coordinated routing.
	ForwardHeader = "corral-forward"
	// ForwardedHeader marks a forwarded request: it is never forwarded
	// again (one hop; a stale hop answers NotLeader or WrongRange).
	ForwardedHeader = "corral-forwarded"
)
