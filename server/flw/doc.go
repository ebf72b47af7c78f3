// Package flw renders ZooKeeper 3.9.3's four-letter-word ("4lw") outputs
// byte for byte from a snapshot of server state (PROTOCOL §14).
//
// Tools parse this text: go-zookeeper's FLWSrvr/FLWCons/FLWRuok, kazoo's
// server_version (the zookeeper.version line of envi), Prometheus and
// Datadog exporters (mntr), zktop (stat/srvr). So every word reproduces the
// Java server's PrintWriter calls exactly, including their quirks: ruok,
// isro, gtmk and stmk end without a newline; hash prints the "not serving"
// message without one while every other word prints it with one; srvr's
// average latency is a Java double rounded to four places while cons's is
// an integer; wchs has no space after "Total watches:".
//
// The package has no sockets and no clocks: the server gathers a State
// (under whatever locks it needs), calls Render, writes the bytes and
// closes the connection. Detecting the word on a new connection is
// wire.FourLetterWord's job.
//
// Files, one concept each:
//
//	state.go    State and the records it holds
//	render.go   Render, Allowed, the whitelist and the "not serving" rule
//	stat.go     srvr, stat, cons and the per-connection line
//	watches.go  wchs, wchc, wchp
//	dump.go     dump (session and connection expiry buckets, ephemerals)
//	mntr.go     mntr, DefaultMetricNames, Summary, Percentiles, RoundAvg
//	env.go      DefaultEnv: Go stand-ins for envi's java.* values
//	java.go     Java's Double.toString, Long.toHexString,
//	            InetSocketAddress.toString and Date.toString
//
// Sources: the 3.9.3 classes in org.apache.zookeeper.server.command,
// ServerStats, ServerCnxn.dumpConnectionInfo, WatchManager, ExpiryQueue,
// DataTree.dumpEphemerals, checked against a running 3.9.3 server.
package flw
