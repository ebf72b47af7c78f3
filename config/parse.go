package config

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Parse reads a zoo.cfg from r. It returns the configuration, the warnings
// (one per ignored or unknown key, per clamped value, and per inconsistency
// ZooKeeper itself would only log), and an error wrapping ErrInvalid (a
// *KeyError naming the key and value where there is one) if the file would
// not start a server. Each warning is also logged at Warn level on logger,
// which may be nil.
//
// Parse does not read dataDir/myid, so checks that need the server's id
// (is it in the server list, may it use extendedTypesEnabled) are left to
// Load. A dynamicConfigFile is read relative to the working directory, as
// ZooKeeper does.
func Parse(r io.Reader, logger *slog.Logger) (*Config, []string, error) {
	p := newParser(logger, os.ReadFile)
	c, err := p.parse(r)
	if err != nil {
		return nil, p.warnings, fmt.Errorf("config: %w", err)
	}
	return c, p.warnings, nil
}

type parser struct {
	logger   *slog.Logger
	readFile func(string) ([]byte, error)
	warnings []string

	c *Config
	// Keys whose default depends on others or on being set at all.
	minSessionSet, maxSessionSet bool
	forceSyncSet, durabilitySet  bool
	peerType                     string // "" when peerType is absent
	dynamicConfigFile            string
	servers                      map[int64]serverEntry
	// filePasswords are ssl.*.passwordPath contents, applied last.
	filePasswords map[*string]string
	// sysProps are JVM system properties given besides the file
	// (sysprops.go); the file's keys take precedence.
	sysProps []property
}

type serverEntry struct {
	key    string
	server Server
}

func newParser(logger *slog.Logger, readFile func(string) ([]byte, error)) *parser {
	return &parser{
		logger:   logger,
		readFile: readFile,
		c:        Default(),
		servers:  make(map[int64]serverEntry),

		filePasswords: make(map[*string]string),
	}
}

func (p *parser) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.warnings = append(p.warnings, msg)
	if p.logger != nil {
		p.logger.Warn("zoo.cfg: " + msg)
	}
}

// parse reads the properties, applies them and validates the result,
// leaving out the checks that need the server id.
func (p *parser) parse(r io.Reader) (*Config, error) {
	if err := p.parseNoValidate(r); err != nil {
		return nil, err
	}
	if err := p.validate(false); err != nil {
		return nil, err
	}
	return p.c, nil
}

func (p *parser) parseNoValidate(r io.Reader) error {
	props, err := readProperties(r)
	if err != nil {
		return err
	}
	props = p.withSysProps(props)
	for _, e := range p.dedup(props) {
		if err := p.apply(e.Key, e.Value, e.Line); err != nil {
			return err
		}
	}
	if p.dynamicConfigFile != "" {
		// As ZooKeeper: with a dynamic file the servers live only there.
		if len(p.servers) > 0 {
			ids := slices.Sorted(maps.Keys(p.servers))
			e := p.servers[ids[0]]
			return &KeyError{Key: e.key, Value: e.server.String(), Reason: "must be in the dynamic config file when dynamicConfigFile is set"}
		}
		if err := p.readDynamicConfig(); err != nil {
			return err
		}
	}
	p.finish()
	return nil
}

// canonicalKey maps the zookeeper.-prefixed spelling of a key corral
// honours to the plain one, so that duplicates are caught whichever
// spelling each occurrence uses.
func canonicalKey(key string) string {
	if s, ok := strings.CutPrefix(key, sysPropPrefix); ok && (sysPropKeys[s] || isTLSKey(s)) {
		return s
	}
	return key
}

// sysPropKeys are the keys corral honours that ZooKeeper reads as system
// properties (zookeeper.<key>, or the bare key for jute.maxbuffer and
// znode.container.*); both spellings are accepted.
var sysPropKeys = map[string]bool{
	"snapCount":                                true,
	"snapSizeLimitInKb":                        true,
	"forceSync":                                true,
	"globalOutstandingLimit":                   true,
	"4lw.commands.whitelist":                   true,
	"extendedTypesEnabled":                     true,
	"DigestAuthenticationProvider.superDigest": true,
	"jute.maxbuffer":                           true,
	"znode.container.checkIntervalMs":          true,
	"znode.container.maxPerMinute":             true,
	"znode.container.maxNeverUsedIntervalMs":   true,
	"admin.enableServer":                       true,
	"admin.serverAddress":                      true,
	"admin.serverPort":                         true,
	"admin.commandURL":                         true,
	"admin.idleTimeout":                        true,
	"admin.rateLimiterIntervalInMS":            true,
	"admin.snapshot.enabled":                   true,
	"admin.restore.enabled":                    true,
	"admin.console.enabled":                    true,
	"admin.console.writable":                   true,
	"admin.console.adminAddresses":             true,
	"admin.console.kvEndpoints":                true,
	"admin.console.logEndpoints":               true,
	"enforceQuota":                             true,
	"audit.enable":                             true,
	"audit.logFile":                            true,
}

// dedup trims keys and values as QuorumPeerConfig does and keeps, for
// each key, the last value (java.util.Properties is a map) at the position
// of its first occurrence, warning about the repeats.
func (p *parser) dedup(props []property) []property {
	var out []property
	index := make(map[string]int)
	for _, pr := range props {
		key := javaTrim(pr.Key)
		canon := canonicalKey(key)
		e := property{Key: key, Value: javaTrim(pr.Value), Line: pr.Line}
		if i, ok := index[canon]; ok {
			p.warn("line %d: %s: set again (first on line %d); the last value wins", pr.Line, key, out[i].Line)
			e.Line = out[i].Line
			out[i] = e
			continue
		}
		index[canon] = len(out)
		out = append(out, e)
	}
	return out
}

// apply sets the field for one trimmed key/value pair.
func (p *parser) apply(key, value string, line int) error {
	c := p.c
	switch key {
	case "dataDir":
		return setString(&c.DataDir, key, value)
	case "dataLogDir":
		return setString(&c.DataLogDir, key, value)
	case "clientPort":
		v, err := parseInt(key, value, 0, 65535)
		c.ClientPort = v
		return err
	case "clientPortAddress":
		return setString(&c.ClientPortAddress, key, javaTrim(unbracket(value)))
	case "tickTime":
		v, err := parseInt(key, value, 1, maxInt32)
		c.TickTime = v
		return err
	case "initLimit":
		v, err := parseInt(key, value, 0, maxInt32)
		c.InitLimit = v
		return err
	case "syncLimit":
		v, err := parseInt(key, value, 0, maxInt32)
		c.SyncLimit = v
		return err
	case "maxClientCnxns":
		v, err := parseInt(key, value, 0, maxInt32)
		c.MaxClientCnxns = v
		return err
	case "minSessionTimeout":
		// -1 is ZooKeeper's "unset": the default applies.
		v, err := parseInt(key, value, -1, maxInt32)
		c.MinSessionTimeout, p.minSessionSet = v, v != -1
		return err
	case "maxSessionTimeout":
		v, err := parseInt(key, value, -1, maxInt32)
		c.MaxSessionTimeout, p.maxSessionSet = v, v != -1
		return err
	case "electionAlg":
		v, err := parseInt(key, value, minInt32, maxInt32)
		if err == nil && v != 3 {
			err = &KeyError{Key: key, Value: value, Reason: "only 3 (fast leader election) is supported"}
		}
		return err
	case "peerType":
		switch strings.ToLower(value) {
		case "observer", "participant":
			p.peerType = strings.ToLower(value)
			return nil
		}
		return &KeyError{Key: key, Value: value, Reason: "want observer or participant"}
	case "standaloneEnabled":
		return parseBool(&c.StandaloneEnabled, key, value)
	case "reconfigEnabled":
		return parseBool(&c.ReconfigEnabled, key, value)
	case "syncEnabled":
		return parseBool(&c.SyncEnabled, key, value)
	case "quorumListenOnAllIPs":
		return parseBool(&c.QuorumListenOnAllIPs, key, value)
	case "autopurge.snapRetainCount":
		v, err := parseInt(key, value, minInt32, maxInt32)
		if err == nil && v < MinAutopurgeSnapRetainCount {
			p.warn("line %d: %s: %d is below the minimum; using %d", line, key, v, MinAutopurgeSnapRetainCount)
			v = MinAutopurgeSnapRetainCount
		}
		c.AutopurgeSnapRetainCount = v
		return err
	case "autopurge.purgeInterval":
		v, err := parseInt(key, value, minInt32, maxInt32)
		if err == nil && v < 0 {
			// ZooKeeper's DatadirCleanupManager treats <= 0 as "off".
			p.warn("line %d: %s: %d is negative; purging disabled", line, key, v)
			v = 0
		}
		c.AutopurgePurgeInterval = v
		return err
	case "dynamicConfigFile":
		return setString(&p.dynamicConfigFile, key, value)
	case "version":
		// The dynamic configuration's version (hex), kept in the static
		// file by ZooKeeper's backward compatibility mode; nothing to do.
		return parseHexVersion(key, value)
	case "PurgeTime":
		v, err := parseInt(key, value, 0, maxInt32)
		c.PurgeTimeMs = int64(v)
		return err
	case "NumberToRetain":
		v, err := parseInt(key, value, 1, maxInt32)
		c.NumberToRetain = int(v)
		return err
	case "durability":
		switch d := Durability(strings.ToLower(value)); d {
		case DurabilitySync, DurabilityAsync, DurabilityDiskless:
			c.Durability, p.durabilitySet = d, true
			return nil
		}
		return &KeyError{Key: key, Value: value, Reason: "want sync, async or diskless"}
	case "metricsProvider.className":
		switch value {
		case PrometheusMetricsProvider, NullMetricsProvider, DefaultMetricsProvider:
			c.Metrics.ClassName = value
			return nil
		}
		return &KeyError{Key: key, Value: value, Reason: "corral provides " + PrometheusMetricsProvider +
			", " + DefaultMetricsProvider + " and " + NullMetricsProvider + " only"}
	case "metricsProvider.httpHost":
		return setString(&c.Metrics.HTTPHost, key, javaTrim(unbracket(value)))
	case "metricsProvider.httpPort":
		v, err := parseInt(key, value, 0, 65535)
		c.Metrics.HTTPPort = v
		return err
	case "metricsProvider.exportJvmInfo":
		// Boolean.parseBoolean: anything but "true" is false.
		c.Metrics.ExportJvmInfo = strings.EqualFold(value, "true")
		return nil
	case "memory.limit":
		v, err := parseBytes(key, value)
		c.MemoryLimit = v
		return err
	case "rlog.root":
		if !strings.HasPrefix(value, "/") || value == "/" || strings.HasSuffix(value, "/") {
			return &KeyError{Key: key, Value: value, Reason: "want an absolute znode path other than /"}
		}
		c.RlogRoot = value
		return nil
	case "rlog.groupCommit":
		switch value {
		case RlogGroupCommitDecoupled:
			c.RlogGroupCommit = ""
		case RlogGroupCommitCoupled:
			c.RlogGroupCommit = value
		default:
			return &KeyError{Key: key, Value: value, Reason: "want decoupled or coupled"}
		}
		return nil
	case "rlog.segmentSize":
		v, err := parseBytes(key, value)
		if err == nil && (v < 64<<10 || v > 1<<30) {
			err = &KeyError{Key: key, Value: value, Reason: "want 64K to 1G"}
		}
		c.RlogSegmentSize = v
		return err
	case "store":
		switch value {
		case "znode", "kv":
			c.Store = value
			return nil
		}
		return &KeyError{Key: key, Value: value, Reason: "want znode or kv"}
	case "apiPort":
		v, err := parseInt(key, value, 0, 65535)
		c.APIPort = v
		return err
	case "apiPortAddress":
		return setString(&c.APIPortAddress, key, javaTrim(unbracket(value)))
	case "kv.leaderPolicy":
		switch v := strings.ToLower(value); v {
		case "fixed", "random", "roundrobin", "coolest":
			c.KVLeaderPolicy = v
			return nil
		}
		return &KeyError{Key: key, Value: value, Reason: "want fixed, random, roundrobin or coolest"}
	case "kv.leaderChangeThreshold":
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 1000 {
			return &KeyError{Key: key, Value: value, Reason: "want a heat above 0 and at most 1000 (1: a compaction is due)"}
		}
		c.KVLeaderChangeThreshold = v
		return nil
	case "kv.leaderChangeMinIntervalMs":
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil || v < 0 || v > 24*3600*1000 {
			return &KeyError{Key: key, Value: value, Reason: "want milliseconds between 0 and 86400000"}
		}
		c.KVLeaderChangeMinIntervalMs = v
		return nil
	case "kv.memTableSize":
		v, err := parseBytes(key, value)
		if err == nil && v >= 4<<30 {
			err = &KeyError{Key: key, Value: value, Reason: "pebble's memtables are under 4G"}
		}
		c.KVMemTableSize = v
		return err
	case "kv.rowCacheSize":
		if value == "off" {
			c.KVRowCacheSize = -1
			return nil
		}
		v, err := parseBytes(key, value)
		if v == 0 {
			v = -1 // written 0: none
		}
		c.KVRowCacheSize = v
		return err
	}
	if strings.HasPrefix(key, serverKeyPrefix) {
		return p.addServer(key, value)
	}
	if n, ok := strings.CutPrefix(key, "apiAddress."); ok {
		id, err := strconv.ParseInt(n, 10, 64)
		if err != nil || id < 1 || id > MaxServerID {
			return &KeyError{Key: key, Value: value, Reason: "want apiAddress.N with N a server id"}
		}
		if _, _, err := net.SplitHostPort(value); err != nil {
			return &KeyError{Key: key, Value: value, Reason: "want host:port"}
		}
		if c.APIAddrs == nil {
			c.APIAddrs = make(map[int64]string)
		}
		c.APIAddrs[id] = value
		return nil
	}
	if strings.HasPrefix(key, "group.") || strings.HasPrefix(key, "weight.") {
		return &KeyError{Key: key, Value: value, Reason: "hierarchical quorums (group.N, weight.N) are not supported"}
	}
	if handled, err := p.applyTLS(key, value, line); handled {
		return err
	}
	if sk := canonicalKey(key); sysPropKeys[sk] {
		return p.applySysProp(key, sk, value, line)
	}
	if err := unimplementedSecurity(key, value); err != nil {
		return err
	}
	p.warn("line %d: %s: %s", line, key, ignoredReason(key))
	return nil
}

// applySysProp handles the keys ZooKeeper reads as system properties. Its
// Integer.getInteger/Long.getLong accept Java's decode syntax (0x.., #..,
// 0..), silently falling back to the default on garbage; corral accepts the
// same syntax and rejects garbage.
func (p *parser) applySysProp(key, canon, value string, line int) error {
	c := p.c
	switch canon {
	case "snapCount":
		v, err := javaDecode(key, value, 32)
		if err == nil && v < MinSnapCount {
			p.warn("line %d: %s: %d is below the minimum; using %d", line, key, v, MinSnapCount)
			v = MinSnapCount
		}
		c.SnapCount = int(v)
		return err
	case "snapSizeLimitInKb":
		// SyncRequestProcessor: a value of 0 or less turns the byte
		// trigger off.
		v, err := javaDecode(key, value, 64)
		c.SnapSizeLimitKB = v
		return err
	case "forceSync":
		// ZooKeeper's FileTxnLog: forceSync is off iff the value is "no".
		// Anything but yes/no is a mistake (forceSync=false means "yes" to
		// ZooKeeper), so we refuse it.
		switch value {
		case "yes":
			c.ForceSync = true
		case "no":
			c.ForceSync = false
		default:
			return &KeyError{Key: key, Value: value, Reason: "want yes or no"}
		}
		p.forceSyncSet = true
		return nil
	case "globalOutstandingLimit":
		v, err := javaDecode(key, value, 32)
		if err == nil && v < 1 {
			err = &KeyError{Key: key, Value: value, Reason: "must be positive"}
		}
		c.GlobalOutstandingLimit = int(v)
		return err
	case "4lw.commands.whitelist":
		c.FourLetterWordWhitelist = parseWhitelist(value)
		return nil
	case "extendedTypesEnabled":
		return parseBool(&c.ExtendedTypesEnabled, key, value)
	case "enforceQuota":
		return parseBool(&c.EnforceQuota, key, value)
	case "audit.enable":
		return parseBool(&c.AuditEnable, key, value)
	case "audit.logFile":
		c.AuditLogFile = value
		return nil
	case "DigestAuthenticationProvider.superDigest":
		if value != "" && !strings.Contains(value, ":") {
			return &KeyError{Key: key, Value: value, Reason: "want user:base64(sha1(user:password))"}
		}
		c.SuperDigest = value
		return nil
	case "jute.maxbuffer":
		v, err := javaDecode(key, value, 32)
		if err == nil && v < 1 {
			err = &KeyError{Key: key, Value: value, Reason: "must be positive"}
		}
		c.JuteMaxBuffer = int(v)
		return err
	case "znode.container.checkIntervalMs":
		v, err := javaDecode(key, value, 32)
		if err == nil && v < 1 {
			err = &KeyError{Key: key, Value: value, Reason: "must be positive"}
		}
		c.ContainerCheckIntervalMs = int(v)
		return err
	case "znode.container.maxPerMinute":
		v, err := javaDecode(key, value, 32)
		if err == nil && v < 1 {
			err = &KeyError{Key: key, Value: value, Reason: "must be positive"}
		}
		c.ContainerMaxPerMinute = int(v)
		return err
	case "znode.container.maxNeverUsedIntervalMs":
		v, err := javaDecode(key, value, 64)
		if err == nil && v < 0 {
			err = &KeyError{Key: key, Value: value, Reason: "must not be negative"}
		}
		c.ContainerMaxNeverUsedIntervalMs = v
		return err
	}
	return p.applyAdmin(key, canon, value)
}

// applyAdmin handles admin.*, which JettyAdminServer reads with
// Boolean.getBoolean/Integer.getInteger (system properties): corral
// accepts the same values and refuses garbage.
func (p *parser) applyAdmin(key, canon, value string) error {
	a := &p.c.Admin
	switch canon {
	case "admin.enableServer":
		// ZooKeeper: Boolean.parseBoolean(System.getProperty(..., "true")).
		return parseBool(&a.EnableServer, key, value)
	case "admin.serverAddress":
		return setString(&a.ServerAddress, key, javaTrim(unbracket(value)))
	case "admin.serverPort":
		v, err := parseInt(key, value, 0, 65535)
		a.ServerPort = v
		return err
	case "admin.commandURL":
		if !strings.HasPrefix(value, "/") || value == "/" {
			return &KeyError{Key: key, Value: value, Reason: "want a path such as /commands"}
		}
		a.CommandURL = strings.TrimSuffix(value, "/")
		return nil
	case "admin.idleTimeout":
		v, err := parseInt(key, value, 1, maxInt32)
		a.IdleTimeoutMs = v
		return err
	case "admin.rateLimiterIntervalInMS":
		v, err := javaDecode(key, value, 32)
		if err == nil && v < 0 {
			err = &KeyError{Key: key, Value: value, Reason: "must not be negative"}
		}
		a.RateLimiterIntervalMs = int(v)
		return err
	case "admin.snapshot.enabled":
		return parseBool(&a.SnapshotEnabled, key, value)
	case "admin.restore.enabled":
		return parseBool(&a.RestoreEnabled, key, value)
	case "admin.console.enabled":
		return parseBool(&a.ConsoleEnabled, key, value)
	case "admin.console.writable":
		return parseBool(&a.ConsoleWritable, key, value)
	case "admin.console.adminAddresses":
		return parseAdminAddrs(&a.ConsoleAdminAddrs, key, value)
	case "admin.console.kvEndpoints":
		return parseEndpoints(&a.ConsoleKVEndpoints, key, value)
	case "admin.console.logEndpoints":
		return parseEndpoints(&a.ConsoleLogEndpoints, key, value)
	}
	return nil
}

func (p *parser) addServer(key, value string) error {
	id, err := parseServerID(key, value)
	if err != nil {
		return err
	}
	if prev, ok := p.servers[id]; ok {
		// server.1 and server.01: ZooKeeper keeps whichever its hash map
		// yields last. Refuse rather than guess.
		return &KeyError{Key: key, Value: value, Reason: fmt.Sprintf("server %d is also defined by %s", id, prev.key)}
	}
	s, err := parseServerLine(key, id, value)
	if err != nil {
		return err
	}
	p.servers[id] = serverEntry{key: key, server: s}
	return nil
}

// readDynamicConfig reads the servers from dynamicConfigFile. ZooKeeper
// writes one (zoo.cfg.dynamic.<version>) when reconfigEnabled=true and
// points zoo.cfg at it, so a zoo.cfg that has run ZooKeeper may need it.
func (p *parser) readDynamicConfig() error {
	const key = "dynamicConfigFile"
	path := p.dynamicConfigFile
	data, err := p.readFile(path)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", key, path, err)
	}
	props, err := readProperties(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s=%q: %w", key, path, err)
	}
	hasVersion := false
	for _, pr := range props {
		k, v := javaTrim(pr.Key), javaTrim(pr.Value)
		switch {
		case strings.HasPrefix(k, serverKeyPrefix):
			err = p.addServer(k, v)
		case k == "version":
			var u uint64
			if u, err = strconv.ParseUint(v, 16, 64); err != nil {
				err = &KeyError{Key: k, Value: v, Reason: "not a hexadecimal version"}
			} else {
				p.c.ConfigVersion, hasVersion = int64(u), true
			}
		case strings.HasPrefix(k, "group") || strings.HasPrefix(k, "weight"):
			err = &KeyError{Key: k, Value: v, Reason: "hierarchical quorums (group.N, weight.N) are not supported"}
		default:
			err = &KeyError{Key: k, Value: v, Reason: "only server.N and version may appear in a dynamic config file"}
		}
		if err != nil {
			return fmt.Errorf("%s=%q: line %d: %w", key, path, pr.Line, err)
		}
	}
	if !hasVersion {
		// ZooKeeper writes the version into the file's name only.
		p.c.ConfigVersion, _ = versionFromFileName(path)
	}
	p.c.DynamicConfigFile = path
	return nil
}

// finish applies the defaults that depend on other keys.
func (p *parser) finish() {
	c := p.c
	p.finishTLS()
	if !p.minSessionSet {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if !p.maxSessionSet {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.DataLogDir == "" {
		c.DataLogDir = c.DataDir
	}
	if !p.durabilitySet {
		if c.ForceSync {
			c.Durability = DurabilitySync
		} else {
			c.Durability = DurabilityAsync
		}
	} else if p.forceSyncSet && !c.ForceSync && c.Durability == DurabilitySync {
		p.warn("forceSync=no has no effect with durability=sync")
	}
	if c.Durability != DurabilitySync {
		// Neither async nor diskless fsyncs per write.
		c.ForceSync = false
	}
	c.Servers = c.Servers[:0]
	for _, e := range p.servers {
		c.Servers = append(c.Servers, e.server)
	}
	slices.SortFunc(c.Servers, func(a, b Server) int { return cmp.Compare(a.ID, b.ID) })
	if len(c.Servers) == 0 {
		c.Servers = nil
	}
}

// parseWhitelist is FourLetterCommands.isEnabled's reading of
// 4lw.commands.whitelist: comma separated, trimmed, empties dropped, "*"
// anywhere means everything, srvr always on.
func parseWhitelist(value string) []string {
	var out []string
	for _, w := range strings.Split(value, ",") {
		w = javaTrim(w)
		if w == "*" {
			return []string{"*"}
		}
		if w != "" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if !slices.Contains(out, "srvr") {
		out = append(out, "srvr")
	}
	return out
}

const (
	maxInt32 = 1<<31 - 1
	minInt32 = -1 << 31
)

// parseInt is Integer.parseInt (decimal, optional sign, 32 bits) with a
// range check.
// parseBytes reads a non-negative byte count with an optional K, M, G or T
// suffix (powers of 1024, either case, optionally followed by "B" or
// "iB"): "512M", "2GiB", "1073741824".
func parseBytes(key, value string) (int64, error) {
	num := strings.TrimSuffix(value, "B")
	if num != value {
		num = strings.TrimSuffix(num, "i")
	}
	shift := 0
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'k', 'K':
			shift = 10
		case 'm', 'M':
			shift = 20
		case 'g', 'G':
			shift = 30
		case 't', 'T':
			shift = 40
		}
		if shift > 0 {
			num = num[:n-1]
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > (1<<62)>>shift {
		return 0, &KeyError{Key: key, Value: value, Reason: "want a byte count such as 2G, 512M or 1073741824"}
	}
	return v << shift, nil
}

func parseInt(key, value string, lo, hi int) (int, error) {
	v, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return 0, &KeyError{Key: key, Value: value, Reason: "not an integer"}
	}
	if int(v) < lo || int(v) > hi {
		return 0, &KeyError{Key: key, Value: value, Reason: rangeReason(lo, hi)}
	}
	return int(v), nil
}

func rangeReason(lo, hi int) string {
	switch {
	case hi == maxInt32 && lo == 0:
		return "must not be negative"
	case hi == maxInt32 && lo == 1:
		return "must be positive"
	case hi == maxInt32:
		return fmt.Sprintf("must be at least %d", lo)
	}
	return fmt.Sprintf("must be between %d and %d", lo, hi)
}

// javaDecode is Integer.decode / Long.decode: optional sign, then 0x, 0X
// or # for hex, a leading 0 for octal, else decimal.
func javaDecode(key, value string, bits int) (int64, error) {
	s := value
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x"), strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "#"):
		base, s = 16, s[1:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if s == "" || s[0] == '-' || s[0] == '+' {
		return 0, &KeyError{Key: key, Value: value, Reason: "not an integer"}
	}
	if neg {
		s = "-" + s
	}
	v, err := strconv.ParseInt(s, base, bits)
	if err != nil {
		return 0, &KeyError{Key: key, Value: value, Reason: "not an integer"}
	}
	return v, nil
}

// parseBool is QuorumPeerConfig.parseBoolean: true or false, any case.
// (ZooKeeper's Boolean.getBoolean, used for system properties such as
// extendedTypesEnabled, reads anything but "true" as false; we refuse the
// anything.)
func parseBool(dst *bool, key, value string) error {
	switch strings.ToLower(value) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return &KeyError{Key: key, Value: value, Reason: "want true or false"}
	}
	return nil
}

// parseAdminAddrs reads "id=host:port,id=host:port": the members'
// AdminServer addresses by server id.
func parseAdminAddrs(dst *map[int64]string, key, value string) error {
	out := make(map[int64]string)
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, addr, ok := strings.Cut(part, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
		if !ok || err != nil || n < 0 {
			return &KeyError{Key: key, Value: value, Reason: "want id=host:port,... (" + strconv.Quote(part) + ")"}
		}
		addr = strings.TrimSpace(addr)
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return &KeyError{Key: key, Value: value, Reason: "want id=host:port,... (" + strconv.Quote(part) + ")"}
		}
		if _, dup := out[n]; dup {
			return &KeyError{Key: key, Value: value, Reason: "server " + strconv.FormatInt(n, 10) + " given twice"}
		}
		out[n] = addr
	}
	*dst = out
	return nil
}

// parseEndpoints reads "host:port,host:port" (blanks around the commas
// ignored).
func parseEndpoints(dst *[]string, key, value string) error {
	var out []string
	seen := make(map[string]bool)
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(part); err != nil || port == "" {
			return &KeyError{Key: key, Value: value, Reason: "want host:port,... (" + strconv.Quote(part) + ")"}
		}
		if seen[part] {
			return &KeyError{Key: key, Value: value, Reason: strconv.Quote(part) + " given twice"}
		}
		seen[part] = true
		out = append(out, part)
	}
	*dst = out
	return nil
}

func setString(dst *string, key, value string) error {
	if value == "" {
		return &KeyError{Key: key, Value: value, Reason: "empty"}
	}
	*dst = value
	return nil
}

func parseHexVersion(key, value string) error {
	if _, err := strconv.ParseUint(value, 16, 64); err != nil {
		return &KeyError{Key: key, Value: value, Reason: "not a hexadecimal version"}
	}
	return nil
}

// unbracket strips the brackets of an IPv6 literal ("[::1]"), which
// InetAddress.getByName accepts.
func unbracket(h string) string {
	if len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}
