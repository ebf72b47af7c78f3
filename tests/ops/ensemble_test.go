package ops

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// TestEnsembleMetricsAndZabCommands runs a 3-member corral ensemble: the
// leader's mntr counts its commits and their latencies, every member
// counts its election, and the AdminServer's quorum commands (zabstate,
// leader, voting_view) describe the member that answers them. All members
// are given one admin port: the first to bind it answers, the others warn
// and serve without one.
func TestEnsembleMetricsAndZabCommands(t *testing.T) {
	if env.Kind != harness.Corral {
		t.Skip("corral's figures")
	}
	port := testport.Free(t)
	en := env.StartEnsemble(t, 3, harness.EnsembleConfig{Server: harness.Config{Extra: []string{
		"admin.enableServer=true", "admin.serverAddress=127.0.0.1", "admin.serverPort=" + strconv.Itoa(port),
	}}})
	leader := en.Leader()
	if leader < 0 {
		t.Fatal("no leader")
	}
	c := connect(t, en.Server(leader).Addr())
	const n = 50
	for i := 0; i < n; i++ {
		if _, err := c.Create(fmt.Sprintf("/e%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	atLeast := func(i int, key string, want int64) {
		t.Helper()
		v, err := en.Mntr(i, key)
		if err != nil {
			t.Error(err)
			return
		}
		if got, err := strconv.ParseInt(v, 10, 64); err != nil || got < want {
			t.Errorf("member %d: %s = %s, want at least %d", i+1, key, v, want)
		}
	}
	atLeast(leader, "zk_commit_count", n)
	atLeast(leader, "zk_cnt_proposal_latency", n)
	atLeast(leader, "zk_cnt_quorum_ack_latency", n)
	atLeast(leader, "zk_cnt_updatelatency", n)
	for i := 0; i < en.Len(); i++ {
		atLeast(i, "zk_looking_count", 1)
		atLeast(i, "zk_cnt_election_time", 1)
	}

	a := &adminTarget{name: "corral", base: fmt.Sprintf("http://127.0.0.1:%d/commands", port)}
	var zs map[string]any
	_, _, body := a.get(t, "/zabstate", nil)
	if err := json.Unmarshal(body, &zs); err != nil {
		t.Fatal(err)
	}
	myid := int(zs["myid"].(float64))
	if zs["zabstate"] != "broadcast" || zs["voting"] != true || myid < 1 || myid > 3 ||
		zs["is_leader"] != (myid == en.ID(leader)) {
		t.Errorf("zabstate = %v (leader is %d)", zs, en.ID(leader))
	}
	var ld map[string]any
	_, _, body = a.get(t, "/leader", nil)
	if err := json.Unmarshal(body, &ld); err != nil {
		t.Fatal(err)
	}
	if int(ld["leader_id"].(float64)) != en.ID(leader) || ld["leader_ip"] != "127.0.0.1" {
		t.Errorf("leader = %v (leader is %d)", ld, en.ID(leader))
	}
	var vv map[string]any
	_, _, body = a.get(t, "/voting_view", nil)
	if err := json.Unmarshal(body, &vv); err != nil {
		t.Fatal(err)
	}
	if cc := vv["current_config"].(map[string]any); len(cc) != 3 {
		t.Errorf("voting_view = %v", vv)
	}
}

// TestTransferLeadership hands leadership from the leader to each other
// voter in turn through the AdminServer's transfer_leadership command
// while a client writes: the target leads afterwards, and every write
// the client saw acknowledged is present on every member.
func TestTransferLeadership(t *testing.T) {
	if env.Kind != harness.Corral {
		t.Skip("corral's own command")
	}
	ports := []int{testport.Free(t), testport.Free(t), testport.Free(t)}
	en := env.StartEnsemble(t, 3, harness.EnsembleConfig{MemberExtra: func(i int) []string {
		return []string{"admin.enableServer=true", "admin.serverAddress=127.0.0.1",
			"admin.serverPort=" + strconv.Itoa(ports[i])}
	}})
	auth := "digest " + harness.SuperUser + ":" + harness.SuperPassword
	post := func(i int, to int) (int, map[string]any) {
		t.Helper()
		u := fmt.Sprintf("http://127.0.0.1:%d/commands/transfer_leadership?to=%d", ports[i], to)
		req, _ := http.NewRequest(http.MethodPost, u, nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, m
	}

	c := connect(t, en.Server(0).Addr())
	var acked []string
	n := 0
	write := func(k int) {
		for j := 0; j < k; j++ {
			p := fmt.Sprintf("/t%d", n)
			n++
			if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err == nil {
				acked = append(acked, p)
			}
		}
	}
	write(20)
	for round := 0; round < 2; round++ {
		leader := en.WaitQuorum()
		target := (leader + 1) % en.Len()
		if st, m := post(target, en.ID(leader)); st != http.StatusConflict {
			t.Errorf("transfer asked of follower %d: %d %v, want 409", en.ID(target), st, m)
		}
		st, m := post(leader, en.ID(target))
		if st != http.StatusOK || m["transfer_to"] != float64(en.ID(target)) {
			t.Fatalf("transfer %d -> %d: %d %v", en.ID(leader), en.ID(target), st, m)
		}
		write(20)
		testutil.Eventually(t, 30*time.Second, fmt.Sprintf("member %d leads", en.ID(target)), func() bool {
			return en.Leader() == target
		})
		write(20)
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged")
	}
	for i := 0; i < en.Len(); i++ {
		mc := connect(t, en.Server(i).Addr())
		if _, err := mc.Sync("/"); err != nil {
			t.Fatal(err)
		}
		for _, p := range acked {
			if ok, _, err := mc.Exists(p); err != nil || !ok {
				t.Errorf("member %d: acknowledged %s missing (%v)", i+1, p, err)
			}
		}
	}
}
