package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/cli"
)

// TestTLSFlagErrors: TLS settings that cannot be used stop the CLI with a
// usage error before it connects anywhere.
func TestTLSFlagErrors(t *testing.T) {
	dir := t.TempDir()
	badCfg := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(badCfg, []byte("zookeeper.client.secure=true\nzookeeper.ssl.clientAuth=sometimes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-tls-keystore", "x.p12", "ls", "/"}, "need -tls"},
		{[]string{"-tls", "-tls-truststore", filepath.Join(dir, "missing.pem"), "ls", "/"}, "missing.pem"},
		{[]string{"-tls", "-tls-truststore", "ca.crt", "ls", "/"}, "extension"},
		{[]string{"-client-configuration", filepath.Join(dir, "nope"), "ls", "/"}, "-client-configuration"},
		{[]string{"-client-configuration", badCfg, "ls", "/"}, "ssl.clientAuth"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(context.Background(), cli.Config{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, TerminalFd: -1}, c.args)
		if code != cli.ExitUsage || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("cli %v: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), cli.ExitUsage, c.msg)
		}
	}
}
