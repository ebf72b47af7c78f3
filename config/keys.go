package config

import "strings"

// Keys corral accepts but does not act on. Each produces one warning
// naming the key; a key in none of these tables and not handled by
// parser.apply is unknown and also warned about. Keys are matched as
// written and with one leading "zookeeper." removed, since ZooKeeper turns
// an unrecognised zoo.cfg key k into the system property zookeeper.k.

const (
	reasonJVMOnly     = "ignored: JVM-only"
	reasonUnsupported = "ignored: not supported by corral"
	reasonUnknown     = "ignored: unknown key"
)

// sysPropPrefix is what ZooKeeper puts in front of every zoo.cfg key
// QuorumPeerConfig does not know before making it a system property.
const sysPropPrefix = "zookeeper."

// jvmOnlyKeys configure the Java server's machinery (Netty/NIO, the
// Jetty admin server's and the metrics provider's threads, JVM
// monitoring): there is nothing in corral for them to configure. Security
// keys are never ignored: see security.go.
var jvmOnlyKeys = map[string]bool{
	"serverCnxnFactory":               true,
	"clientCnxnSocket":                true,
	"client.secure":                   true,
	"fips-mode":                       true,
	"quorum.cnxn.threads.size":        true,
	"jute.maxbuffer.extrasize":        true,
	"preAllocSize":                    true,
	"flushDelay":                      true,
	"maxBatchSize":                    true,
	"maxWriteQueuePollTime":           true,
	"fsync.warningthresholdms":        true,
	"intBufferStartingSizeBytes":      true,
	"maxResponseCacheSize":            true,
	"maxGetChildrenResponseCacheSize": true,
	"watchManagerName":                true,
}

var jvmOnlyPrefixes = []string{
	"admin.",
	"jvm.pause.",
	"metricsProvider.",
	"nio.",
	"netty.",
	"javax.",
	"java.",
	"jmx.",
	"messageTracker.",
	"commitProcessor.",
	"learner.",
}

// unsupportedKeys name ZooKeeper features corral does not have (local
// sessions, observer masters, multi-address, hierarchical tuning knobs,
// throttles of the Java pipeline, ...). A server team that implements one
// moves its key to parser.apply.
var unsupportedKeys = map[string]bool{
	"localSessionsEnabled":               true,
	"localSessionsUpgradingEnabled":      true,
	"observerMasterPort":                 true,
	"connectToLearnerMasterLimit":        true,
	"clientPortListenBacklog":            true,
	"oraclePath":                         true,
	"skipACL":                            true,
	"digest.enabled":                     true,
	"maxCnxns":                           true,
	"readonlymode.enabled":               true,
	"leaderServes":                       true,
	"txnLogSizeLimitInKb":                true,
	"closeSessionTxn.enabled":            true,
	"enableEagerACLCheck":                true,
	"serializeLastProcessedZxid.enabled": true,
	"cnxTimeout":                         true,
	"electionPortBindRetry":              true,
	"commitLogCount":                     true,
	"snapshot.trust.empty":               true,
	"snapshot.compression.method":        true,
	"emulate353TTLNodes":                 true,
	"largeRequestMaxBytes":               true,
	"largeRequestThreshold":              true,
	"throttled":                          true,
}

var unsupportedPrefixes = []string{
	"multiAddress.",
	"request_throttle",
	"connection_throttle",
	"4lw.commands.", // any other than 4lw.commands.whitelist, handled in apply
}

// ignoredReason returns why key is accepted without effect, or
// reasonUnknown.
func ignoredReason(key string) string {
	names := []string{key}
	if s, ok := strings.CutPrefix(key, sysPropPrefix); ok {
		names = append(names, s)
	}
	for _, n := range names {
		if jvmOnlyKeys[n] || hasAnyPrefix(n, jvmOnlyPrefixes) {
			return reasonJVMOnly
		}
	}
	for _, n := range names {
		if unsupportedKeys[n] || hasAnyPrefix(n, unsupportedPrefixes) {
			return reasonUnsupported
		}
	}
	return reasonUnknown
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
