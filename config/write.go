package config

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// WriteZooCfg writes c as a zoo.cfg that Apache ZooKeeper 3.9 and corral
// both start from (MyID excepted: it lives in dataDir/myid, see
// WriteMyID). Parse reads it back to an equal Config. Every value is
// written, defaults included, so that neither server's defaults matter.
//
// For ZooKeeper's sake forceSync is written as "no" when Durability is
// async or diskless (its closest behaviour), whatever ForceSync says; and
// jute.maxbuffer and znode.container.* are written for corral but have no
// effect on ZooKeeper, which reads them only as JVM system properties:
// start it with JVMFlags.
func (c *Config) WriteZooCfg(w io.Writer) error {
	var b strings.Builder
	put := func(k, v string) {
		b.WriteString(escapeProperty(k, true))
		b.WriteByte('=')
		b.WriteString(escapeProperty(v, false))
		b.WriteByte('\n')
	}
	itoa := strconv.Itoa
	btoa := strconv.FormatBool

	b.WriteString("# Written by corral. Apache ZooKeeper 3.9 and corral both read this file.\n")
	put("tickTime", itoa(c.TickTime))
	put("initLimit", itoa(c.InitLimit))
	put("syncLimit", itoa(c.SyncLimit))
	if c.DataDir != "" {
		put("dataDir", c.DataDir)
	}
	if c.DataLogDir != "" {
		put("dataLogDir", c.DataLogDir)
	}
	if c.ClientPort != 0 {
		put("clientPort", itoa(c.ClientPort))
	}
	if c.ClientPortAddress != "" {
		put("clientPortAddress", c.ClientPortAddress)
	}
	if c.Store != "" {
		put("store", c.Store)
	}
	if c.APIPort != 0 {
		put("apiPort", itoa(c.APIPort))
	}
	if c.APIPortAddress != "" {
		put("apiPortAddress", c.APIPortAddress)
	}
	if c.KVLeaderPolicy != "" {
		put("kv.leaderPolicy", c.KVLeaderPolicy)
	}
	if c.KVLeaderChangeThreshold != 0 {
		put("kv.leaderChangeThreshold", strconv.FormatFloat(c.KVLeaderChangeThreshold, 'g', -1, 64))
	}
	if c.KVLeaderChangeMinIntervalMs != 0 {
		put("kv.leaderChangeMinIntervalMs", strconv.FormatInt(c.KVLeaderChangeMinIntervalMs, 10))
	}
	switch {
	case c.KVRowCacheSize < 0:
		put("kv.rowCacheSize", "off")
	case c.KVRowCacheSize > 0:
		put("kv.rowCacheSize", strconv.FormatInt(c.KVRowCacheSize, 10))
	}
	if c.KVMemTableSize != 0 {
		put("kv.memTableSize", strconv.FormatInt(c.KVMemTableSize, 10))
	}
	for _, id := range slices.Sorted(maps.Keys(c.APIAddrs)) {
		put("apiAddress."+strconv.FormatInt(id, 10), c.APIAddrs[id])
	}
	put("maxClientCnxns", itoa(c.MaxClientCnxns))
	put("minSessionTimeout", itoa(c.MinSessionTimeout))
	put("maxSessionTimeout", itoa(c.MaxSessionTimeout))
	put("autopurge.snapRetainCount", itoa(c.AutopurgeSnapRetainCount))
	put("autopurge.purgeInterval", itoa(c.AutopurgePurgeInterval))
	put("standaloneEnabled", btoa(c.StandaloneEnabled))
	put("reconfigEnabled", btoa(c.ReconfigEnabled))
	put("syncEnabled", btoa(c.SyncEnabled))
	put("quorumListenOnAllIPs", btoa(c.QuorumListenOnAllIPs))

	b.WriteString("# ZooKeeper reads these as the system properties zookeeper.<key>.\n")
	put("snapCount", itoa(c.SnapCount))
	if c.SnapSizeLimitKB != DefaultSnapSizeLimitKB {
		put("snapSizeLimitInKb", strconv.FormatInt(c.SnapSizeLimitKB, 10))
	}
	forceSync := c.ForceSync
	if c.Durability == DurabilityAsync || c.Durability == DurabilityDiskless {
		forceSync = false
	}
	if forceSync {
		put("forceSync", "yes")
	} else {
		put("forceSync", "no")
	}
	put("globalOutstandingLimit", itoa(c.GlobalOutstandingLimit))
	if len(c.FourLetterWordWhitelist) > 0 {
		put("4lw.commands.whitelist", strings.Join(c.FourLetterWordWhitelist, ","))
	}
	put("extendedTypesEnabled", btoa(c.ExtendedTypesEnabled))
	if c.EnforceQuota {
		put("enforceQuota", "true")
	}
	if c.AuditEnable {
		put("audit.enable", "true")
	}
	if c.AuditLogFile != "" {
		put("audit.logFile", c.AuditLogFile)
	}
	if c.SuperDigest != "" {
		put("DigestAuthenticationProvider.superDigest", c.SuperDigest)
	}
	c.writeTLS(put)

	b.WriteString("# The AdminServer (ZooKeeper: zookeeper.admin.*) and the metrics endpoint.\n")
	put("admin.enableServer", btoa(c.Admin.EnableServer))
	if c.Admin.ServerAddress != "" {
		put("admin.serverAddress", c.Admin.ServerAddress)
	}
	put("admin.serverPort", itoa(c.Admin.ServerPort))
	put("admin.commandURL", c.Admin.CommandURL)
	put("admin.idleTimeout", itoa(c.Admin.IdleTimeoutMs))
	put("admin.rateLimiterIntervalInMS", itoa(c.Admin.RateLimiterIntervalMs))
	put("admin.snapshot.enabled", btoa(c.Admin.SnapshotEnabled))
	put("admin.restore.enabled", btoa(c.Admin.RestoreEnabled))
	if c.Metrics.ClassName != "" {
		put("metricsProvider.className", c.Metrics.ClassName)
	}
	if c.Metrics.HTTPHost != "" {
		put("metricsProvider.httpHost", c.Metrics.HTTPHost)
	}
	put("metricsProvider.httpPort", itoa(c.Metrics.HTTPPort))
	put("metricsProvider.exportJvmInfo", btoa(c.Metrics.ExportJvmInfo))

	b.WriteString("# corral only; ZooKeeper needs them as JVM flags (-Dkey=value).\n")
	put("jute.maxbuffer", itoa(c.JuteMaxBuffer))
	put("znode.container.checkIntervalMs", itoa(c.ContainerCheckIntervalMs))
	put("znode.container.maxPerMinute", itoa(c.ContainerMaxPerMinute))
	put("znode.container.maxNeverUsedIntervalMs", strconv.FormatInt(c.ContainerMaxNeverUsedIntervalMs, 10))
	if c.Durability != "" {
		b.WriteString("# corral only; ZooKeeper ignores it.\n")
		put("durability", string(c.Durability))
	}
	if c.RlogRoot != "" {
		b.WriteString("# corral only; ZooKeeper ignores it.\n")
		put("rlog.root", c.RlogRoot)
	}
	if c.RlogGroupCommit != "" {
		b.WriteString("# corral only; ZooKeeper ignores it.\n")
		put("rlog.groupCommit", c.RlogGroupCommit)
	}
	if c.RlogSegmentSize > 0 {
		b.WriteString("# corral only; ZooKeeper ignores it.\n")
		put("rlog.segmentSize", strconv.FormatInt(c.RlogSegmentSize, 10))
	}
	if c.MemoryLimit > 0 {
		b.WriteString("# corral only; ZooKeeper ignores it.\n")
		put("memory.limit", strconv.FormatInt(c.MemoryLimit, 10))
	}

	for _, s := range c.Servers {
		put(fmt.Sprintf("server.%d", s.ID), s.String())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JVMFlags are the -D flags that make Apache ZooKeeper honour the settings
// of c that it reads only as JVM system properties, never from zoo.cfg:
// jute.maxbuffer and znode.container.*. Only non-default values are
// given.
func (c *Config) JVMFlags() []string {
	var flags []string
	add := func(k string, v, def int64) {
		if v != def {
			flags = append(flags, fmt.Sprintf("-D%s=%d", k, v))
		}
	}
	add("jute.maxbuffer", int64(c.JuteMaxBuffer), DefaultJuteMaxBuffer)
	add("znode.container.checkIntervalMs", int64(c.ContainerCheckIntervalMs), DefaultContainerCheckIntervalMs)
	add("znode.container.maxPerMinute", int64(c.ContainerMaxPerMinute), DefaultContainerMaxPerMinute)
	add("znode.container.maxNeverUsedIntervalMs", c.ContainerMaxNeverUsedIntervalMs, 0)
	return flags
}
