package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadWithSystemProperties(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "zoo.cfg")
	os.WriteFile(cfg, []byte("tickTime=2000\ndataDir="+dir+"\nclientPort=2181\nsnapCount=500\n"), 0o644)
	c, warnings, err := LoadWithSystemProperties(cfg, []string{
		"zookeeper.extendedTypesEnabled=true",
		"zookeeper.DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=",
		"zookeeper.snapCount=7", // the file's snapCount wins, as in ZooKeeper
		"znode.container.checkIntervalMs=1000",
		"zookeeper.enforceQuota=true",
		"zookeeper.log.dir=/var/log/zookeeper", // logging: ignored silently
		"java.net.preferIPv4Stack=true",        // the JVM's: ignored silently
		"zookeeper.tickTime=1",                 // ZooKeeper does not read it either
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.ExtendedTypesEnabled || c.SuperDigest != "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" || c.SnapCount != 500 ||
		c.ContainerCheckIntervalMs != 1000 || !c.EnforceQuota || c.TickTime != 2000 {
		t.Fatalf("config %+v", c)
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "zookeeper.tickTime") || strings.Contains(joined, "log.dir") || strings.Contains(joined, "java.net") {
		t.Fatalf("warnings:\n%s", joined)
	}
	if _, _, err := LoadWithSystemProperties(cfg, []string{"novalue"}, nil); err == nil {
		t.Fatal("property without '=' accepted")
	}
}
