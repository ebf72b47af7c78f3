// Package wire is ZooKeeper's client wire protocol: the jute binary encoding,
// the request and response records of zookeeper.jute, opcodes, error codes
// and framing. It knows nothing about sessions, trees or sockets beyond
// reading and writing length-prefixed frames; the server and the clients
// (ours and the bench load generator) share it.
//
// Files, one concept each:
//
//	jute.go              Encoder / Decoder for the jute primitives
//	types.go             Id, ACL, Stat and permission bits
//	opcodes.go, errors.go  Op, xids, event/state/mode constants, Code
//	record.go            Record, NewRequest, NewResponse, DecodeRequest
//	records_session.go   handshake, headers, auth, SetWatches, notifications
//	records_request.go   tree-operation requests
//	records_response.go  their responses
//	multi.go             multi / multiRead requests and responses
//	frame.go             length-prefixed frames and the frame size limit
//	fourletter.go        recognising four-letter words on a new connection
//
// Decoders never panic on input: every length is checked against the bytes
// that remain and against the configured maximum, and a malformed record is
// reported as an error wrapping ErrMarshalling. Records are plain structs
// with Encode/Decode methods; hot paths decode into values they own and
// encode straight into an output buffer (Encoder.BeginFrame/EndFrame), so
// the only allocations are the strings and byte slices a record carries.
package wire
