// Package kvserver runs one member of a key-value replica group: a
// kv.Store fed by a replica.Driver over the zab log (package wal), peers
// over the TCP transport, and the KV gRPC service on an apisrv listener.
// Group is the kv.Group the service writes and confirms reads through.
// leaderchange.go runs the compaction-aware leader change: members send
// their temperatures to each other (heatmsg.go, in zab.MsgDriver
// messages) and the leader holds its compactions and hands leadership
// over as kv.DecideLeaderChange says.
package kvserver
