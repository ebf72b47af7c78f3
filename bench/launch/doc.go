// Package launch starts the servers a benchmark measures: one corral or
// Apache ZooKeeper server, or an ensemble of either, on 127.0.0.1 from one
// zoo.cfg (ServerConfig.Config written by config.WriteZooCfg), with free ports, a working
// directory per run, corral built from the checkout or ZooKeeper's jars
// located when not given, and readiness and leader checks through the
// four-letter words. It also holds the bounds every experiment's flags
// are checked against (MaxConns, MaxInflight, MaxPhase).
//
// Processes are started, stopped, killed and probed through
// internal/proc, which tests/harness uses too; launch adds what a
// benchmark needs on top (errors instead of test failures, ensembles
// measured by leader and member, corral and ZooKeeper located or built).
package launch
