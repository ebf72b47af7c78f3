package config

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// JVM system properties. ZooKeeper reads many settings as system
// properties (zookeeper.<key>, and a few bare ones such as jute.maxbuffer
// and znode.container.*), so deployments pass them as -D flags in
// SERVER_JVMFLAGS or JVMFLAGS, which zkServer.sh hands to the JVM. corral's
// scripts/zkServer.sh hands them to `corral server -D key=value`, and they
// arrive here.
//
// Precedence is ZooKeeper's: QuorumPeerConfig copies each zoo.cfg key it
// does not know into System.setProperty("zookeeper."+key), overwriting a
// -D flag, so a key set in the file wins over the same key given as a
// property. A property ZooKeeper would not read (one for a key it reads
// only from zoo.cfg, such as -Dzookeeper.tickTime) gets the same warning
// as an unknown zoo.cfg key. Properties outside ZooKeeper's namespace
// (-Djava.*, -Dlog4j.*) and the logging ones zkServer.sh sets itself are
// ignored silently: they configure the JVM, which corral does not have.

// loggingProps are the zookeeper.* properties of ZooKeeper's launch
// scripts and logging configuration, which have no meaning to corral.
var loggingProps = map[string]bool{
	"zookeeper.log.dir":            true,
	"zookeeper.log.file":           true,
	"zookeeper.root.logger":        true,
	"zookeeper.log.threshold":      true,
	"zookeeper.console.threshold":  true,
	"zookeeper.tracelog.dir":       true,
	"zookeeper.tracelog.file":      true,
	"zookeeper.jmx.log4j.disable":  true,
	"zookeeper.log.maxfilesize":    true,
	"zookeeper.log.maxbackupindex": true,
}

// LoadWithSystemProperties is Load for a server whose JVM would have had
// the system properties props ("key=value" each, as after -D).
func LoadWithSystemProperties(path string, props []string, logger *slog.Logger) (*Config, []string, error) {
	p := newParser(logger, os.ReadFile)
	for _, kv := range props {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("config: system property %q: want key=value", kv)
		}
		if loggingProps[k] || !strings.HasPrefix(k, sysPropPrefix) && !sysPropKeys[k] {
			continue
		}
		p.sysProps = append(p.sysProps, property{Key: k, Value: v})
	}
	c, err := p.load(path)
	if err != nil {
		return nil, p.warnings, fmt.Errorf("config: %s: %w", path, err)
	}
	return c, p.warnings, nil
}

// withSysProps appends to the file's properties the system properties
// whose key the file does not set.
func (p *parser) withSysProps(props []property) []property {
	if len(p.sysProps) == 0 {
		return props
	}
	inFile := make(map[string]bool, len(props))
	for _, pr := range props {
		inFile[canonicalKey(javaTrim(pr.Key))] = true
	}
	for _, sp := range p.sysProps {
		if !inFile[canonicalKey(sp.Key)] {
			props = append(props, sp)
		}
	}
	return props
}
