package ensemble

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// TestReconfigAddObserver adds a running observer to a 3-voter ensemble
// and removes it again: /zookeeper/config lists it as an observer, writes
// reach it, and the voters stay three.
func TestReconfigAddObserver(t *testing.T) {
	ens := env.StartEnsemble(t, 3, reconfigConfig())
	admin := connectAll(t, ens, 0, "admin")
	if err := admin.AddAuth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)); err != nil {
		t.Fatal(err)
	}
	o := ens.AddJoiner(true)
	if _, err := admin.IncrementalReconfig([]string{ens.Spec(o)}, nil, -1); err != nil {
		t.Fatalf("reconfig -add observer: %v", err)
	}
	c := connectOne(t, ens, o)
	var raw string
	if !testutil.Within(convergeWait, func() bool {
		var p, obs []string
		p, obs, raw = configOf(t, c)
		return len(p) == 3 && len(obs) == 1 && obs[0] == fmt.Sprintf("server.%d", ens.ID(o))
	}) {
		t.Fatalf("observer's /zookeeper/config:\n%s", raw)
	}
	for k := 0; k < 10; k++ {
		if _, err := admin.Create(fmt.Sprintf("/obs-%d", k), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Sync("/"); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 10; k++ {
		if ok, _, err := c.Exists(fmt.Sprintf("/obs-%d", k)); err != nil || !ok {
			t.Fatalf("observer lacks /obs-%d (%v)", k, err)
		}
	}
	if mode := ens.Mode(o); mode != "observer" {
		t.Fatalf("added observer's mode is %q", mode)
	}
	if _, err := admin.IncrementalReconfig(nil, []string{fmt.Sprint(ens.ID(o))}, -1); err != nil {
		t.Fatalf("reconfig -remove observer: %v", err)
	}
	for i := 0; i < 3; i++ {
		raw := waitConfig(t, ens, i, 3)
		if strings.Contains(raw, ":observer") {
			t.Fatalf("member %s still lists an observer:\n%s", ens.MemberString(i), raw)
		}
	}
}
