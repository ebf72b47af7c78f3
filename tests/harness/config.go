package harness

import (
	"fmt"
	"strings"
	"time"

	"github.com/corral-db/corral/config"
)

// SuperDigest is the super user configured on every test server: user
// "super", password "test" (the value kazoo's and go-zookeeper's own test
// harnesses use).
const (
	SuperDigest   = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="
	SuperUser     = "super"
	SuperPassword = "test"
	TickTime      = 2000 * time.Millisecond
)

// Config is the part of zoo.cfg a test may vary. The zero value is the
// standard test server: all four-letter words, TTL nodes, a 1 s container
// reaper, the super digest, unlimited connections per IP, no admin server.
type Config struct {
	// MaxClientCnxns limits connections per client IP; 0 is unlimited.
	MaxClientCnxns int
	// Whitelist is 4lw.commands.whitelist; "" means "*".
	Whitelist string
	// ContainerCheckInterval is the container/TTL reaper period; 0 means 1 s.
	ContainerCheckInterval time.Duration
	// Extra lines appended to zoo.cfg (e.g. "snapCount=100").
	Extra []string
}

func (c Config) whitelist() string {
	if c.Whitelist == "" {
		return "*"
	}
	return c.Whitelist
}

func (c Config) containerIntervalMs() int64 {
	if c.ContainerCheckInterval <= 0 {
		return 1000
	}
	return c.ContainerCheckInterval.Milliseconds()
}

// zooCfg renders the zoo.cfg both targets read.
func (c Config) zooCfg(dataDir string, port int) string {
	return ZooCfg(c.config(dataDir, port, TickTime), c.Extra...)
}

// config is the standard test server c stands for, on 127.0.0.1:port
// with its data in dataDir and the given tick; min and max session
// timeouts follow the tick (2 and 20 ticks) as in both servers' defaults.
func (c Config) config(dataDir string, port int, tick time.Duration) *config.Config {
	z := config.Default()
	z.TickTime = int(tick.Milliseconds())
	z.MinSessionTimeout, z.MaxSessionTimeout = 2*z.TickTime, 20*z.TickTime
	z.DataDir = dataDir
	z.ClientPort, z.ClientPortAddress = port, "127.0.0.1"
	z.FourLetterWordWhitelist = nil
	for _, w := range strings.Split(c.whitelist(), ",") {
		z.FourLetterWordWhitelist = append(z.FourLetterWordWhitelist, strings.TrimSpace(w))
	}
	z.ExtendedTypesEnabled = true
	z.ContainerCheckIntervalMs = int(c.containerIntervalMs())
	z.SuperDigest = SuperDigest
	z.MaxClientCnxns = c.MaxClientCnxns
	z.Admin.EnableServer = false
	return z
}

// ZooCfg is z as config.WriteZooCfg writes it, then the extra lines: a
// key given again there wins, as it does for both servers' parsers. Every
// zoo.cfg a test writes goes through it; extra lines carry what a Config
// cannot say (keys corral refuses, peerType).
func ZooCfg(z *config.Config, extra ...string) string {
	var b strings.Builder
	z.WriteZooCfg(&b) // a strings.Builder does not fail
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// javaProps are the system properties ZooKeeper needs besides zoo.cfg.
// ZooKeeper copies unknown zoo.cfg keys to "zookeeper.<key>" system
// properties, which covers extendedTypesEnabled, the super digest, the 4lw
// whitelist and admin.enableServer; but the container reaper reads
// "znode.container.checkIntervalMs" without the "zookeeper." prefix
// (ZooKeeperServerMain), so that one is honoured only as a -D flag. All are
// passed as -D anyway so the reference run never depends on parse order.
func (c Config) javaProps() []string {
	return []string{
		"-Dzookeeper.extendedTypesEnabled=true",
		"-Dzookeeper.DigestAuthenticationProvider.superDigest=" + SuperDigest,
		fmt.Sprintf("-Dznode.container.checkIntervalMs=%d", c.containerIntervalMs()),
		"-Dzookeeper.4lw.commands.whitelist=" + c.whitelist(),
		"-Dzookeeper.admin.enableServer=false",
	}
}
