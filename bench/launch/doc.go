// Package launch starts the servers a benchmark measures: one corral or
// Apache ZooKeeper server, or an ensemble of either, on 127.0.0.1 from one
// generated zoo.cfg (ServerConfig.ZooCfg), with free ports, a working
// directory per run, corral built from the checkout or ZooKeeper's jars
// located when not given, and readiness and leader checks through the
// four-letter words. It also holds the bounds every experiment's flags
// are checked against (MaxConns, MaxInflight, MaxPhase).
//
// tests/harness starts servers for the end-to-end tests its own way; one
// Launcher for both is still to be done.
package launch
