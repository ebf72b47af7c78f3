// Package console is corral's built-in web console: a znode tree browser,
// the ensemble's health and live metrics, served as one http.Handler that
// the admin server mounts at /console (off when the admin server is off).
//
// The console never goes around the server's access control. Its backend
// is an ordinary ZooKeeper client (package client) of the ensemble: every
// tree read and write is a client request, authenticated with the digest
// credentials the user typed in the page (or none), so the server's ACL
// checks decide, exactly as for any other client. Writes are refused by
// the console itself unless Config.Writable is set
// (admin.console.writable=true), and then still need the ACL's consent.
// Ensemble state comes from each member's four-letter words (srvr, mntr,
// cons, wchs, wchc), the same text any monitoring tool reads. A
// leadership transfer is asked of the leader's AdminServer
// (transfer_leadership) with the user's credentials, which it checks.
// The Key-value and Logs pages are read-only gRPC clients (kvclient,
// rlogclient) of the endpoints in Config.KVEndpoints and LogEndpoints.
//
// Nothing runs while nobody looks: metrics are sampled only while a page
// polls them (the sampler stops after Config.IdleStop without a poll), and
// client sessions are opened on the first request that needs them and
// closed after Config.ConnIdle without use.
//
// The front end is plain HTML, CSS and JavaScript embedded with embed
// (static/): no build step, no library, nothing fetched from a network.
// Its pages talk to the JSON endpoints under api/ (see api.go).
//
// Files, one concept each:
//
//	console.go   Config, Console, New, routing, Close
//	api.go       the JSON envelope, request parsing, error mapping
//	sessions.go  the cache of client sessions keyed by credentials
//	tree.go      children (paged), node, create, set, delete
//	ensemble.go  members, roles, zxid and lag; sessions and watches views
//	flw.go       four-letter-word exchange and parsers
//	metrics.go   MetricsSource, the on-demand sampler and its ring buffer
//	transfer.go  leadership transfer through the leader's AdminServer
//	kv.go        the Key-value page: member roles, tables, get, scan
//	logs.go      the Logs page: positions of named logs, a tail
package console
