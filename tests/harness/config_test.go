package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/config"
)

func parse(t *testing.T, text string) *config.Config {
	t.Helper()
	c, _, err := config.Parse(strings.NewReader(text), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return c
}

// The standard test server's zoo.cfg reads back as what the harness
// promises, and an extra line overrides what WriteZooCfg wrote.
func TestZooCfgReadsBack(t *testing.T) {
	c := parse(t, Config{Whitelist: "srvr, ruok", Extra: []string{"snapCount=50"}}.zooCfg("/d", 4000))
	if c.TickTime != int(TickTime.Milliseconds()) || c.DataDir != "/d" || c.ClientPort != 4000 ||
		c.ClientPortAddress != "127.0.0.1" || !c.ExtendedTypesEnabled || c.SuperDigest != SuperDigest ||
		c.ContainerCheckIntervalMs != 1000 || c.Admin.EnableServer || c.MaxClientCnxns != 0 {
		t.Errorf("read back %+v", c)
	}
	if !slices.Equal(c.FourLetterWordWhitelist, []string{"srvr", "ruok"}) {
		t.Errorf("whitelist %q", c.FourLetterWordWhitelist)
	}
	if c.SnapCount != 50 {
		t.Errorf("snapCount %d, want the extra line's 50", c.SnapCount)
	}
}

// Each member's file names every member, with the ensemble's timing;
// only the observer's own file says peerType=observer.
func TestEnsembleZooCfgReadsBack(t *testing.T) {
	en := &Ensemble{cfg: EnsembleConfig{TickTime: time.Second, InitLimit: 7, SyncLimit: 3, Observers: 1}}
	for i := range 3 {
		en.servers = append(en.servers, &Server{DataDir: "/d", Port: 5000 + i})
		en.members = append(en.members, member{id: i + 1, quorum: 6000 + i, election: 7000 + i, observer: i == 2})
	}
	for i := range 3 {
		text := en.zooCfg(i)
		c := parse(t, text)
		if c.TickTime != 1000 || c.InitLimit != 7 || c.SyncLimit != 3 || c.MaxSessionTimeout != 20000 || len(c.Servers) != 3 {
			t.Errorf("member %d read back %+v", i+1, c)
		}
		if s := c.Servers[2]; !s.Observer || s.ClientPort != 5002 || s.QuorumPort != 6002 {
			t.Errorf("member %d: third server %+v", i+1, s)
		}
		if got := strings.Contains(text, "peerType=observer"); got != (i == 2) {
			t.Errorf("member %d: peerType=observer present %v", i+1, got)
		}
	}
}
