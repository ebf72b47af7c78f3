package ensemble

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// reconfigConfig is ensembleConfig with dynamic reconfiguration enabled.
func reconfigConfig() harness.EnsembleConfig {
	c := ensembleConfig()
	c.Server.Extra = append(c.Server.Extra, "reconfigEnabled=true")
	return c
}

// configOf reads /zookeeper/config on member i (after a sync) and returns
// its participant and observer ids as "server.N" keys.
func configOf(t *testing.T, c *zk.Conn) (participants, observers []string, raw string) {
	t.Helper()
	if _, err := c.Sync("/zookeeper/config"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	data, _, err := c.Get("/zookeeper/config")
	if err != nil {
		t.Fatalf("get /zookeeper/config: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch {
		case strings.Contains(v, ":participant"):
			participants = append(participants, k)
		case strings.Contains(v, ":observer"):
			observers = append(observers, k)
		}
	}
	return participants, observers, string(data)
}

// waitConfig waits until member i's /zookeeper/config has want
// participants.
func waitConfig(t *testing.T, ens *harness.Ensemble, i, want int) string {
	t.Helper()
	c := connectOne(t, ens, i)
	var p []string
	var raw string
	if !testutil.Within(convergeWait, func() bool {
		p, _, raw = configOf(t, c)
		return len(p) == want
	}) {
		t.Fatalf("member %s: /zookeeper/config has %d participants, want %d:\n%s", ens.MemberString(i), len(p), want, raw)
	}
	return raw
}

// TestReconfigGrowShrink grows a reconfig-enabled ensemble from 3 voters
// to 5 with two joining servers, checks every member reports the five and
// replicates writes, then removes two voters under a bounded write load
// and checks that every acknowledged write is on every remaining member
// and on a removed one that still serves.
func TestReconfigGrowShrink(t *testing.T) {
	ens := env.StartEnsemble(t, 3, reconfigConfig())
	admin := connectAll(t, ens, 0, "admin")
	if err := admin.AddAuth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)); err != nil {
		t.Fatal(err)
	}
	// The refusals ZooKeeper gives: no permission without the super
	// user, a stale version, a joiner without a client port.
	anon := connectAll(t, ens, 1, "anon")
	if _, err := anon.IncrementalReconfig(nil, []string{"3"}, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("reconfig without permission: %v, want %v", err, zk.ErrNoAuth)
	}
	if _, err := admin.IncrementalReconfig(nil, []string{"3"}, 12345); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("reconfig from a wrong version: %v, want %v", err, zk.ErrBadVersion)
	}
	if _, err := admin.IncrementalReconfig([]string{"server.9=127.0.0.1:1:2"}, nil, -1); !errors.Is(err, zk.ErrBadArguments) {
		t.Fatalf("joiner without a client port: %v, want %v", err, zk.ErrBadArguments)
	}
	// A joiner that is not running: no quorum of the new configuration
	// is synchronized with the leader.
	if _, err := admin.IncrementalReconfig([]string{"server.7=127.0.0.1:1:2;3", "server.8=127.0.0.1:4:5;6",
		"server.9=127.0.0.1:7:8;9"}, []string{"2"}, -1); err == nil || !strings.Contains(err.Error(), "-13") {
		// go-zookeeper has no name for NEWCONFIGNOQUORUM (-13).
		t.Fatalf("reconfig to absent servers: %v, want error -13 (new config no quorum)", err)
	}

	// Grow 3 -> 5.
	j1, j2 := ens.AddJoiner(false), ens.AddJoiner(false)
	_, stat0, err := admin.Get("/zookeeper/config")
	if err != nil {
		t.Fatal(err)
	}
	st, err := admin.IncrementalReconfig([]string{ens.Spec(j1), ens.Spec(j2)}, nil, -1)
	if err != nil {
		t.Fatalf("reconfig -add: %v", err)
	}
	if st.Mzxid <= stat0.Mzxid {
		t.Fatalf("reconfig reply stat mzxid %x not past %x", st.Mzxid, stat0.Mzxid)
	}
	var raw string
	for i := 0; i < ens.Len(); i++ {
		raw = waitConfig(t, ens, i, 5)
	}
	if want := fmt.Sprintf("version=%x", st.Mzxid); !strings.HasSuffix(raw, want) {
		t.Fatalf("config does not end with %s:\n%s", want, raw)
	}
	t.Logf("grown:\n%s", raw)
	// Writes reach all five.
	for k := 0; k < 20; k++ {
		if _, err := admin.Create(fmt.Sprintf("/grown-%d", k), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create after grow: %v", err)
		}
	}
	for i := 0; i < ens.Len(); i++ {
		c := connectOne(t, ens, i)
		if _, err := c.Sync("/"); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 20; k++ {
			if ok, _, err := c.Exists(fmt.Sprintf("/grown-%d", k)); err != nil || !ok {
				t.Fatalf("member %s lacks /grown-%d (%v)", ens.MemberString(i), k, err)
			}
		}
	}

	// Shrink 5 -> 3 under a bounded write load: remove the leader and one
	// other member. The leader names a successor from the new
	// configuration (ZooKeeper's designated leader; zab/membership.go).
	leader := waitLeader(t, ens)
	remove := []int{leader, j2}
	if leader == j2 {
		remove[1] = j1
	}
	var keep []int
	for i := 0; i < ens.Len(); i++ {
		if i != remove[0] && i != remove[1] {
			keep = append(keep, i)
		}
	}
	t.Logf("leader %d; removing %v, keeping %v", leader, remove, keep)
	var (
		stop  atomic.Bool
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	for w := 0; w < 2; w++ {
		c := connect(t, []string{ens.Server(keep[w]).Addr()}, 0, fmt.Sprintf("load-%d", w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(progressWait)
			for k := 0; k < 2000 && !stop.Load() && time.Now().Before(deadline); k++ {
				p := fmt.Sprintf("/load-%d-%d", w, k)
				if _, err := c.Create(p, []byte("x"), 0, zk.WorldACL(zk.PermAll)); err == nil {
					mu.Lock()
					acked = append(acked, p)
					mu.Unlock()
				}
			}
		}()
	}
	// The load is under way before the reconfiguration.
	testutil.Eventually(t, progressWait, "a write acknowledged before the reconfiguration", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) > 0
	})
	ids := []string{fmt.Sprint(ens.ID(remove[0])), fmt.Sprint(ens.ID(remove[1]))}
	var rerr error
	for attempt := 0; attempt < 20; attempt++ {
		// The leader's removal ends its sessions: retry on another member.
		if _, rerr = admin.IncrementalReconfig(nil, ids, -1); rerr == nil || errors.Is(rerr, zk.ErrBadVersion) {
			break
		}
		t.Logf("reconfig -remove: %v; retrying", rerr)
		time.Sleep(time.Second)
	}
	if rerr != nil {
		t.Fatalf("reconfig -remove %v: %v", ids, rerr)
	}
	time.Sleep(2 * time.Second) // writes go on under the new configuration
	stop.Store(true)
	wg.Wait()
	for _, i := range keep {
		waitConfig(t, ens, i, 3)
	}
	// The removed leader handed over to a member of the new
	// configuration.
	if nl := waitLeader(t, ens); !slices.Contains(keep, nl) {
		t.Fatalf("after removing the leader %s the leader is %s, not a member of the new configuration %v",
			ens.MemberString(leader), ens.MemberString(nl), keep)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged")
	}
	for _, i := range keep {
		c := connectOne(t, ens, i)
		if _, err := c.Sync("/"); err != nil {
			t.Fatal(err)
		}
		for _, p := range acked {
			if ok, _, err := c.Exists(p); err != nil || !ok {
				t.Fatalf("member %s lacks acknowledged %s (%v)", ens.MemberString(i), p, err)
			}
		}
	}
	t.Logf("%d acknowledged writes on all of %v", len(acked), keep)
	// The dynamic file: zoo.cfg now names zoo.cfg.dynamic.<version>,
	// holding the three, and a restarted member starts from it.
	raw = waitConfig(t, ens, keep[0], 3)
	version := raw[strings.LastIndex(raw, "version=")+len("version="):]
	s := ens.Server(keep[0])
	static, err := os.ReadFile(s.CfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(static), "server.") || !strings.Contains(string(static), "dynamicConfigFile=") {
		t.Fatalf("zoo.cfg after reconfig:\n%s", static)
	}
	dyn, err := os.ReadFile(s.CfgPath + ".dynamic." + version)
	if err != nil {
		t.Fatalf("dynamic file: %v", err)
	}
	if n := strings.Count(string(dyn), ":participant"); n != 3 {
		t.Fatalf("dynamic file has %d participants:\n%s", n, dyn)
	}
	// The proposal's zoo.cfg.dynamic.next is gone once committed, and the
	// static file as it was before the first reconfiguration is kept in
	// zoo.cfg.bak (ZooKeeper's setQuorumVerifier and backupOldConfig).
	if _, err := os.Stat(s.CfgPath + ".dynamic.next"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("zoo.cfg.dynamic.next after the commit: %v", err)
	}
	if bak, err := os.ReadFile(s.CfgPath + ".bak"); err != nil || !strings.Contains(string(bak), "server.") {
		t.Fatalf("zoo.cfg.bak: %v\n%s", err, bak)
	}
	s.Stop()
	s.StartAgain()
	if got := waitConfig(t, ens, keep[0], 3); got != raw {
		t.Fatalf("after restart /zookeeper/config is\n%s\nwant\n%s", got, raw)
	}
	// The bulk form with the version it must replace: accepted once,
	// then refused as stale.
	cur, err := strconv.ParseInt(version, 16, 64)
	if err != nil {
		t.Fatalf("version %q: %v", version, err)
	}
	var specs []string
	for _, i := range keep {
		specs = append(specs, ens.Spec(i))
	}
	// The restart above may have closed the admin's connection: an
	// answer that did not come is retried (a retry of one that committed
	// is BADVERSION, which the second call must be in any case).
	bulk := func() error {
		var err error
		for attempt := 0; attempt < 20; attempt++ {
			if _, err = admin.Reconfig(specs, cur); err == nil || definite(err) {
				return err
			}
			t.Logf("bulk reconfig: %v; retrying", err)
			time.Sleep(time.Second)
		}
		return err
	}
	if err := bulk(); err != nil && !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("bulk reconfig from version %x: %v", cur, err)
	}
	if err := bulk(); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("bulk reconfig from the replaced version: %v, want %v", err, zk.ErrBadVersion)
	}
	raw = waitConfig(t, ens, keep[1], 3)
	// corral cli's config prints the same text.
	if bin := env.CorralBin(); bin != "" {
		out, err := exec.Command(bin, "cli", "-server", ens.Server(keep[1]).Addr(), "config").CombinedOutput()
		if err != nil || !strings.Contains(string(out), raw) {
			t.Fatalf("corral cli config: %v\n%s\nwant\n%s", err, out, raw)
		}
	}
	// A removed member goes on as a non-voting follower, as a removed
	// ZooKeeper 3.9.3 server does (its srvr says follower): one that
	// serves must not be stale.
	for _, i := range remove {
		if ens.Mode(i) == "" {
			t.Logf("removed member %s does not serve", ens.MemberString(i))
			continue
		}
		c := connectOne(t, ens, i)
		if _, err := c.Sync("/"); err != nil {
			t.Logf("removed member %s: sync: %v", ens.MemberString(i), err)
			continue
		}
		for _, p := range acked {
			if ok, _, err := c.Exists(p); err == nil && !ok {
				t.Fatalf("removed member %s serves without acknowledged %s", ens.MemberString(i), p)
			}
		}
		t.Logf("removed member %s serves, up to date", ens.MemberString(i))
	}
}

// waitLeader returns the member whose srvr says it leads, waiting for one
// (bounded by progressWait).
func waitLeader(t *testing.T, ens *harness.Ensemble) int {
	t.Helper()
	l := -1
	testutil.Eventually(t, progressWait, "a leader", func() bool {
		l = ens.Leader()
		return l >= 0
	})
	return l
}

// TestReconfigSnapCarriesVersion: a member that starts from an empty
// dataDir and the static zoo.cfg from before a reconfiguration, and is
// synchronized by a SNAP from a leader restarted since that
// reconfiguration, reports the current configuration and its version.
// The restarted members set /zookeeper/config from their dynamic file at
// start-up with the version as the node's mzxid (ZooKeeper's
// ZKDatabase.initConfigInZKDatabase), so the snapshot says which
// configuration it holds.
func TestReconfigSnapCarriesVersion(t *testing.T) {
	cfg := reconfigConfig()
	// Frequent snapshots cut the log: a member with an empty dataDir
	// gets a SNAP.
	cfg.Server.Extra = append(cfg.Server.Extra, "snapCount=10")
	ens := env.StartEnsemble(t, 3, cfg)
	admin := connectAll(t, ens, 0, "admin")
	if err := admin.AddAuth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)); err != nil {
		t.Fatal(err)
	}
	// A reconfiguration to the same three members: a new version.
	var specs []string
	for i := 0; i < ens.Len(); i++ {
		specs = append(specs, ens.Spec(i))
	}
	st, err := admin.Reconfig(specs, -1)
	if err != nil {
		t.Fatalf("bulk reconfig: %v", err)
	}
	version := fmt.Sprintf("version=%x", st.Mzxid)
	for k := 0; k < 30; k++ {
		if _, err := admin.Create(fmt.Sprintf("/before-%d", k), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	admin.Close()
	// Restart every member, so that whichever leads has restarted since
	// the reconfiguration.
	for i := 0; i < ens.Len(); i++ {
		ens.Server(i).Stop()
	}
	for i := 0; i < ens.Len(); i++ {
		ens.Launch(i)
	}
	l := ens.WaitAll()
	c := connectOne(t, ens, l)
	for k := 0; k < 30; k++ {
		if _, err := c.Create(fmt.Sprintf("/after-%d", k), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	_, _, want := configOf(t, c)
	if !strings.HasSuffix(want, version) {
		t.Fatalf("leader %s after restart: /zookeeper/config\n%s\ndoes not end with %s", ens.MemberString(l), want, version)
	}
	// A follower comes back from an empty dataDir (its myid kept) and
	// the zoo.cfg it had before the reconfiguration (zoo.cfg.bak).
	f := (l + 1) % ens.Len()
	s := ens.Server(f)
	s.Stop()
	entries, err := os.ReadDir(s.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "myid" {
			if err := os.RemoveAll(filepath.Join(s.DataDir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	bak, err := os.ReadFile(s.CfgPath + ".bak")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.CfgPath, bak, 0o644); err != nil {
		t.Fatal(err)
	}
	s.StartAgain()
	fc := connectOne(t, ens, f)
	testutil.EventuallyNoError(t, convergeWait, fmt.Sprintf("member %s caught up", ens.MemberString(f)), func() error {
		if _, err := fc.Sync("/"); err != nil {
			return fmt.Errorf("sync: %w", err)
		}
		ok, _, err := fc.Exists("/after-29")
		if err == nil && !ok {
			err = errors.New("/after-29 not there")
		}
		return err
	})
	if _, _, got := configOf(t, fc); got != want {
		t.Fatalf("member %s from an empty dataDir: /zookeeper/config\n%s\nwant the leader's\n%s", ens.MemberString(f), got, want)
	}
}
