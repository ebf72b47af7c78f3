package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/fakezk"
)

// fakeSrvr answers every four-letter word on a loopback port with out,
// as a member answers srvr, and returns the port.
func fakeSrvr(t *testing.T, out string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(fakezk.FourLetter(t, out))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return p
}

// A forced start is refused while a peer answers recovering with a newer
// snapshot than this member's, and allowed when this member's is newer.
func TestForceRecoverRefusesWhileAPeerIsNewer(t *testing.T) {
	const recovering = "This ZooKeeper instance is not currently serving requests\n" +
		"Recovering: restarted from a partial snapshot\nZxid: 0x200000005\nMode: looking\n"
	port := fakeSrvr(t, recovering)
	for _, tc := range []struct {
		own     string
		refused bool
	}{{"snapshot.100000003", true}, {"snapshot.300000000", false}} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "version-2"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "version-2", tc.own), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{DataDir: dir, MyID: 1, Servers: []config.Server{
			{ID: 1, Host: "127.0.0.1", ClientPort: 1},
			{ID: 2, Host: "127.0.0.1", ClientPort: port},
		}}
		var w bytes.Buffer
		err := reportPeerZxids(context.Background(), &w, cfg)
		if (err != nil) != tc.refused {
			t.Errorf("own %s against a recovering peer at 0x200000005: err %v, want refused %v", tc.own, err, tc.refused)
		}
		if !strings.Contains(w.String(), "member 2 (127.0.0.1:") || !strings.Contains(w.String(), "zxid 0x200000005, recovering") {
			t.Errorf("own %s: report lacks the peer's zxid:\n%s", tc.own, w.String())
		}
	}
}
