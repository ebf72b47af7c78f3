// Package kvserver runs one member of a key-value replica group: a
// kv.Store fed by a replica.Driver over the zab log (package wal), peers
// over the TCP transport, and the KV gRPC service on an apisrv listener.
// Group is the kv.Group the service writes and confirms reads through.
//
// RunNode runs a storage node of a sharded cluster: a replica of each of
// several RGs, their zab traffic over one transport (mux.go), one API
// routing requests to the local RG owning each row (kv.ShardedService),
// a session with the configuration manager that records each replica's
// leadership guarded by its epoch, and a leader balancer (balance.go).
// LocalCluster lays out a cluster on loopback for `corral kv cluster`.
//
// leaderchange.go runs the compaction-aware leader change: members send
// their temperatures to each other (heatmsg.go, in zab.MsgDriver
// messages) and the leader holds its compactions and hands leadership
// over as kv.DecideLeaderChange says. On a node each replica runs its
// own, its messages tagged with the RG like the rest of its traffic; the
// balancer leaves an RG alone while its leader change's minimum interval
// runs (balance.go).
//
// Mover (mover.go) moves a ring range from one RG to another while
// clients use it, driving each step on the RGs' leaders through the
// nodes' RangeMove admin service (movesvc.go); RemoveGroup moves every
// range of a group away and deregisters it.
package kvserver
