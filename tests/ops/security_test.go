package ops

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/tests/harness"
)

// TestSecurityKeyRefusesToStart runs the corral binary on zoo.cfg files
// that ask for TLS features, SASL or enforced authentication corral
// lacks: each must exit with
// an error naming the key instead of serving in plaintext.
func TestSecurityKeyRefusesToStart(t *testing.T) {
	if env.Kind != harness.Corral {
		t.Skip("corral's own refusal")
	}
	env.Require(t)
	for _, line := range []string{
		// TLS itself is implemented (docs/design/tls.md); these parts are
		// not.
		"ssl.clientHostnameVerification=true",
		"zookeeper.sslQuorumReloadCertFiles=true",
		"client.certReload=true",
		"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
		"enforce.auth.enabled=true",
		"quorum.auth.enableSasl=true",
	} {
		key, _, _ := strings.Cut(line, "=")
		t.Run(key, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "zoo.cfg")
			z := config.Default()
			z.DataDir, z.ClientPortAddress, z.Admin.EnableServer = filepath.Join(dir, "data"), "127.0.0.1", false
			body := harness.ZooCfg(z, line)
			if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, env.CorralBin(), "server", cfg).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("corral with %s did not exit; it must refuse to start:\n%s", line, out)
			}
			if err == nil {
				t.Fatalf("corral with %s exited 0; want a refusal:\n%s", line, out)
			}
			if !strings.Contains(string(out), key) || !strings.Contains(string(out), "not implemented") {
				t.Errorf("corral's message does not name %s:\n%s", key, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "data", "version-2")); err == nil {
				t.Errorf("corral created its data directory before refusing")
			}
		})
	}
}
