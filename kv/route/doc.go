// Package route maps a KV request to the replica group leader that should
// serve it, from the configuration manager's State (package cm) and the
// corrections servers send back (NotLeader, WrongRange).
//
// It is plain Go with no network code: a client feeds it every new
// cm.State (View.Changed) and every routing error it receives, and asks it
// where each request goes. Leader information only moves forward in zab
// epochs and ring information only forward in ring versions, whichever
// path (CM watch or server error) brings it first.
package route
