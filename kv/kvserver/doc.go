// Package kvserver runs one member of a key-value replica group: a
// kv.Store fed by a replica.Driver over the zab log (package wal), peers
// over the TCP transport, and the KV gRPC service on an apisrv listener.
// Group is the kv.Group the service writes and confirms reads through.
package kvserver
