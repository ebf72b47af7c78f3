// Package config reads and writes ZooKeeper's zoo.cfg, so that one file
// starts either Apache ZooKeeper 3.9 or corral.
//
// The syntax is java.util.Properties (properties.go), read as ZooKeeper's
// QuorumPeerConfig reads it: keys and values trimmed, the last of
// repeated keys winning. The keys QuorumPeerConfig knows (tickTime,
// dataDir, clientPort, server.N, autopurge.*, ...) are matched exactly. Any
// other key k ZooKeeper turns into the system property zookeeper.k; for the
// ones corral honours (snapCount, snapSizeLimitInKb, forceSync, globalOutstandingLimit,
// 4lw.commands.whitelist, extendedTypesEnabled,
// DigestAuthenticationProvider.superDigest, jute.maxbuffer,
// znode.container.*, admin.*) both k and zookeeper.k are accepted; the
// metricsProvider.* keys (Prometheus endpoint) are read as ZooKeeper reads
// them. A security key corral does not implement (TLS, SASL, Kerberos,
// x509, enforced authentication, ...; the one table is in security.go)
// stops start-up with an error naming it: corral never runs weaker than
// configured. Keys that only configure the JVM server (Netty, Jetty's and
// the metrics provider's threads) are accepted with the warning "ignored:
// JVM-only"; ZooKeeper features corral lacks, with "ignored: not supported
// by corral"; anything else with "ignored: unknown key". A value that
// cannot be used is an error naming the key and the value (*KeyError,
// wrapping ErrInvalid).
//
// corral adds keys which ZooKeeper ignores: durability=sync|async|
// diskless (default: async if forceSync=no, else sync), memory.limit,
// the process's soft memory limit in bytes (optional K/M/G/T suffix;
// default none), and rlog.root, the znode under which every child is a
// replicated log (default none), and rlog.groupCommit=decoupled|coupled,
// how the logs' group commit syncs payloads and commit records (default
// decoupled).
//
// Deliberate divergences from ZooKeeper, each commented where it lives:
//
//   - With no clientPortAddress (and no client address on this server's
//     server.N line) corral listens on 127.0.0.1, not on every interface
//     (DefaultClientListenHost); so do the AdminServer and the metrics
//     endpoint without admin.serverAddress / metricsProvider.httpHost.
//   - jute.maxbuffer and znode.container.* take effect from zoo.cfg; in
//     ZooKeeper they work only as JVM flags (see Config.JVMFlags).
//   - Garbage where ZooKeeper would silently use a default (snapCount=abc,
//     extendedTypesEnabled=yes, forceSync=false) is an error.
//   - Raw non-ASCII bytes are read as UTF-8, not ISO-8859-1.
//   - Server ids are 1..255; host|host multi-addresses and hierarchical
//     quorums (group.N, weight.N) are refused.
package config
