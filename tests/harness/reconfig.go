package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// AddJoiner starts a server outside the ensemble's configuration, as
// ZooKeeper's dynamic reconfiguration adds one: its zoo.cfg lists the
// members StartEnsemble started and itself (a participant unless
// observer), and it follows the leader as a non-voting member until a
// reconfig names it. It returns its index and waits until it serves.
func (en *Ensemble) AddJoiner(observer bool) int {
	t := en.t
	t.Helper()
	i := len(en.servers)
	ports := freePorts(t, 3)
	base := filepath.Dir(en.servers[0].Dir)
	dir := filepath.Join(base, fmt.Sprintf("server%d", i+1))
	s := &Server{
		t:       t,
		env:     en.env,
		cfg:     en.cfg.Server,
		Dir:     dir,
		DataDir: filepath.Join(dir, "data"),
		CfgPath: filepath.Join(dir, "zoo.cfg"),
		LogPath: filepath.Join(dir, "server.log"),
		Port:    ports[0],
	}
	en.servers = append(en.servers, s)
	en.members = append(en.members, member{id: i + 1, quorum: ports[1], election: ports[2], observer: observer})
	if err := os.MkdirAll(s.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.DataDir, "myid"), []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.CfgPath, []byte(en.zooCfg(i)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.cleanup)
	s.StartAgain()
	return i
}

// Spec is server i's line in the form a reconfig's joiningServers takes:
// server.N=host:quorumPort:electionPort:role;host:clientPort.
func (en *Ensemble) Spec(i int) string {
	m := en.members[i]
	role := "participant"
	if m.observer {
		role = "observer"
	}
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d:%s;127.0.0.1:%d", m.id, m.quorum, m.election, role, en.servers[i].Port)
}
