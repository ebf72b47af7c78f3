// Package rlog holds end-to-end tests of corral's replicated logs on real
// server processes: an ensemble with rlog.root and apiPort (the logs in
// the ZooKeeper tree, payloads in each member's data log), driven through
// the gRPC API (rlog/rlogclient) while members are SIGKILLed, restarted
// and wiped. Run with `go test ./tests/rlog/`; CORRAL_BIN names a prebuilt
// binary (see tests/README.md).
package rlog
