package config

import (
	"fmt"
	"path/filepath"
)

// LocalEnsemble returns the configs of an n-server ensemble on loopback,
// one per server, for `corral ensemble -n N` and tests. Server i (1..n)
// has MyID i, dataDir baseDir/server<i>, and 3n consecutive ports from
// basePort are used:
//
//	client ports    basePort       .. basePort+n-1
//	quorum ports    basePort+n     .. basePort+2n-1
//	election ports  basePort+2n    .. basePort+3n-1
//
// Every address is 127.0.0.1 (clientPortAddress included, so ZooKeeper
// started from WriteZooCfg also stays on loopback), and each server.N line
// carries its client address so any config lists every client endpoint.
// tickTime, initLimit and syncLimit are those of ZooKeeper's
// zoo_sample.cfg (2000, 10, 5). For n == 1 the one config is standalone:
// no server lines. It returns nil if n < 1 or the ports do not fit in
// 1..65535. The caller writes each myid file (Config.WriteMyID).
func LocalEnsemble(n int, baseDir string, basePort int) []*Config {
	if n < 1 || n > MaxServerID || basePort < 1 || basePort+3*n-1 > 65535 {
		return nil
	}
	var servers []Server
	if n > 1 {
		for i := 1; i <= n; i++ {
			servers = append(servers, Server{
				ID:           int64(i),
				Host:         "127.0.0.1",
				QuorumPort:   basePort + n + i - 1,
				ElectionPort: basePort + 2*n + i - 1,
				ClientAddr:   "127.0.0.1",
				ClientPort:   basePort + i - 1,
			})
		}
	}
	configs := make([]*Config, n)
	for i := 1; i <= n; i++ {
		c := Default()
		c.TickTime = 2000
		c.MinSessionTimeout = 2 * c.TickTime
		c.MaxSessionTimeout = 20 * c.TickTime
		c.InitLimit = 10
		c.SyncLimit = 5
		c.DataDir = filepath.Join(baseDir, fmt.Sprintf("server%d", i))
		c.DataLogDir = c.DataDir
		c.ClientPort = basePort + i - 1
		c.ClientPortAddress = "127.0.0.1"
		c.MyID = int64(i)
		c.Servers = append([]Server(nil), servers...)
		configs[i-1] = c
	}
	return configs
}
