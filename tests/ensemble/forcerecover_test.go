package ensemble

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// snapshotWait bounds the wait for every member to snapshot the last
// write: the promise is max(1 s, 5x the last snapshot's duration) after
// it (docs/design/diskless.md, "Exposure bound"); nothing asserts on time.
const snapshotWait = 30 * time.Second

// TestForceRecoverAfterMajorityCrash is diskless mode's way back after a
// power cut of the whole ensemble (docs/design/diskless.md, "Forced
// recovery"): 50 creates at a low rate (far below snapCount), a wait until
// every member has a snapshot covering the last of them (the exposure
// bound), SIGKILL of all three, a restart in which every member is
// recovering and nothing serves (srvr and mntr say so), then a restart of
// all three with -force-recover: the ensemble serves, every acknowledged
// create is on every member, and each member recorded the forced start.
func TestForceRecoverAfterMajorityCrash(t *testing.T) {
	t.Parallel()
	if env.IsZooKeeper() {
		t.Skip("durability=diskless is corral's")
	}
	// The default snapCount (100k): the creates reach a snapshot through
	// the exposure bound, not through the busy or idle cadence.
	cfg := ensembleConfig()
	cfg.Server.Extra = append(cfg.Server.Extra, "durability=diskless")
	ens := env.StartEnsemble(t, 3, cfg)
	tl := newTimeline(t)
	tl.logf("leader %s", ens.MemberString(ens.WaitAll()))

	cl := connectAll(t, ens, 0, "force-recover")
	const n = 50
	var last int64
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/fr-%02d", i)
		if _, err := cl.Create(p, []byte(p), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		time.Sleep(20 * time.Millisecond) // ~50 writes/s: a trickle
	}
	_, st, err := cl.Exists(fmt.Sprintf("/fr-%02d", n-1))
	if err != nil || st == nil {
		t.Fatalf("stat of the last create: %v %v", st, err)
	}
	last = st.Czxid
	cl.Close()
	tl.logf("%d creates acknowledged, last zxid %#x", n, last)

	if !testutil.Within(snapshotWait, func() bool {
		for i := 0; i < ens.Len(); i++ {
			if newestSnapshot(t, ens.Server(i)) < last {
				return false
			}
		}
		return true
	}) {
		for i := 0; i < ens.Len(); i++ {
			t.Logf("%s: newest snapshot %#x", ens.MemberString(i), newestSnapshot(t, ens.Server(i)))
		}
		t.Fatalf("not every member has a snapshot covering zxid %#x after %s", last, snapshotWait)
	}
	tl.logf("every member has a snapshot covering %#x", last)

	// A power cut: freeze all three first, so no member sees the others
	// go and writes a checkpoint (which would make it complete) before
	// its own SIGKILL.
	tl.logf("freeze and SIGKILL every member; start all again")
	for i := 0; i < ens.Len(); i++ {
		ens.Server(i).Pause()
	}
	for i := 0; i < ens.Len(); i++ {
		ens.Server(i).Kill()
	}
	for i := 0; i < ens.Len(); i++ {
		ens.Launch(i)
	}
	for i := 0; i < ens.Len(); i++ {
		waitRecovering(t, ens, i)
	}
	// Safety, not timing: every member holds only a fuzzy snapshot, so
	// none may serve. Watch a few election rounds.
	var serving string
	if testutil.Within(2*time.Second, func() bool {
		for i := 0; i < ens.Len(); i++ {
			switch m := ens.Mode(i); m {
			case "leader", "follower", "observer":
				serving = fmt.Sprintf("%s serves as %s", ens.MemberString(i), m)
				return true
			}
		}
		return false
	}) {
		t.Fatalf("%s after the crash of every member", serving)
	}
	tl.logf("every member recovering, none serving")

	// One at a time, so the first forced member finds the others still
	// recovering and reports their zxids (the spread).
	tl.logf("restart every member with -force-recover, one at a time")
	for i := 0; i < ens.Len(); i++ {
		ens.Server(i).Stop()
		ens.Server(i).SetFlags("-force-recover")
		ens.Launch(i)
		// It asks its peers before it listens: let it, before the next
		// one stops.
		if !testutil.Within(sessionWait, func() bool {
			_, err := ens.Server(i).FourLetter("srvr")
			return err == nil
		}) {
			t.Fatalf("%s does not answer srvr after a forced start", ens.MemberString(i))
		}
	}
	tl.logf("leader %s", ens.MemberString(ens.WaitAll()))
	for i := 0; i < ens.Len(); i++ {
		c := connectOne(t, ens, i)
		if _, err := c.Sync("/"); err != nil {
			t.Fatalf("%s: sync: %v", ens.MemberString(i), err)
		}
		for j := 0; j < n; j++ {
			p := fmt.Sprintf("/fr-%02d", j)
			data, _, err := c.Get(p)
			if err != nil || string(data) != p {
				t.Fatalf("%s: acknowledged create %s lost: %q %v", ens.MemberString(i), p, data, err)
			}
		}
		c.Close()
		if v, err := ens.Mntr(i, "zk_recovering"); err != nil || v != "0" {
			t.Errorf("%s: zk_recovering %q %v once serving, want 0", ens.MemberString(i), v, err)
		}
		rec, err := os.ReadFile(filepath.Join(ens.Server(i).DataDir, "version-2", "forced-recovery"))
		if err != nil || !strings.Contains(string(rec), "forced recovery") {
			t.Errorf("%s: no record of the forced start: %q %v", ens.MemberString(i), rec, err)
		}
		if log, err := os.ReadFile(ens.Server(i).LogPath); err != nil || !strings.Contains(string(log), "FORCED RECOVERY") {
			t.Errorf("%s: the forced start was not announced on stderr (%v)", ens.MemberString(i), err)
		}
		if i == 0 {
			log, _ := os.ReadFile(ens.Server(i).LogPath)
			for _, j := range []int{1, 2} {
				want := fmt.Sprintf("-force-recover: member %d (%s): zxid 0x", ens.ID(j), ens.Server(j).Addr())
				if !strings.Contains(string(log), want) || !strings.Contains(string(log), "recovering\n") {
					t.Errorf("%s: the first forced member did not report %s as recovering with its zxid", ens.MemberString(i), ens.MemberString(j))
				}
			}
		}
	}
	tl.logf("every acknowledged create on every member")
	for i := 0; i < ens.Len(); i++ {
		ens.Server(i).SetFlags()
	}
}

// waitRecovering waits until member i answers mntr with zk_recovering 1
// and srvr with the not-serving line and its Recovering line.
func waitRecovering(t *testing.T, ens *harness.Ensemble, i int) {
	t.Helper()
	var srvr, rec string
	if !testutil.Within(sessionWait, func() bool {
		rec, _ = ens.Mntr(i, "zk_recovering")
		srvr, _ = ens.Server(i).FourLetter("srvr")
		return rec == "1" && strings.Contains(srvr, "not currently serving") && strings.Contains(srvr, "\nRecovering: ")
	}) {
		t.Fatalf("%s: not reported recovering: mntr zk_recovering %q, srvr %q", ens.MemberString(i), rec, srvr)
	}
}

// newestSnapshot is the zxid of the newest snapshot file in s's data
// directory (snapshot.<hex zxid>, published by rename), or -1.
func newestSnapshot(t *testing.T, s *harness.Server) int64 {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(s.DataDir, "version-2"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	newest := int64(-1)
	for _, e := range ents {
		h, ok := strings.CutPrefix(e.Name(), "snapshot.")
		if !ok {
			continue
		}
		if z, err := strconv.ParseInt(h, 16, 64); err == nil && z > newest {
			newest = z
		}
	}
	return newest
}
