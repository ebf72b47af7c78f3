package main

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/kv/kvserver"
	"github.com/corral-db/corral/replica"
)

// TestKVZooCfgMetrics: the zoo.cfg `corral kv ensemble -metrics-port`
// writes for a member carries its metrics address in metricsProvider.*,
// and `corral server` reads it back as the member's metrics endpoint;
// without the flag a member serves no metrics.
func TestKVZooCfgMetrics(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, metrics := range []string{"127.0.0.1:39501", ""} {
		g, err := kvserver.NewLocalGroup(3, t.TempDir(), replica.Sync, 100*time.Millisecond, logger)
		if err != nil {
			t.Fatal(err)
		}
		m := g.Configs[1]
		for _, c := range g.Configs {
			c.QuorumListener.Close()
			c.ElectionListener.Close()
			c.APIListener.Close()
		}
		m.MetricsListen = metrics
		if err := writeKVZooCfg(m); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := config.Load(filepath.Join(m.Dir, "zoo.cfg"), logger)
		if err != nil {
			t.Fatal(err)
		}
		kc, err := kvMemberConfig(cfg, logger)
		if err != nil {
			t.Fatal(err)
		}
		if kc.MetricsListen != metrics || kc.MetricsRuntime != (metrics != "") {
			t.Errorf("metrics %q: the member's zoo.cfg gives %q (runtime %v)", metrics, kc.MetricsListen, kc.MetricsRuntime)
		}
	}
}
