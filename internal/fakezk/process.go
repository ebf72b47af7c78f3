package fakezk

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/wire"
)

// ProcessEnv, set to "1", makes a test binary whose TestMain checks it
// serve as a fake server (ServeMain) instead of running tests, so that an
// experiment can start the test binary as its corral server.
const ProcessEnv = "CORRAL_BENCH_TEST_FAKE_SERVER"

// ServeMain serves a Server on the client address of the zoo.cfg named
// by args (`server zoo.cfg`) until SIGTERM, as a test binary re-executed
// in place of a server does (see ProcessEnv). A member of an ensemble
// leads when no higher-numbered member is up, resumes sessions, and has
// failoverPath (the failover experiment's node) from the start.
func ServeMain(args []string, failoverPath string) int {
	if len(args) != 2 || args[0] != "server" {
		fmt.Fprintln(os.Stderr, "usage: server zoo.cfg")
		return 2
	}
	b, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, _, err := config.Parse(bytes.NewReader(b), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	addr := net.JoinHostPort(cfg.ClientPortAddress, strconv.Itoa(cfg.ClientPort))
	var peers map[int]string // client addresses of an ensemble's members
	myid := 0
	if len(cfg.Servers) > 0 {
		b, err := os.ReadFile(filepath.Join(cfg.DataDir, "myid"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		myid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		peers = map[int]string{}
		for _, sv := range cfg.Servers {
			peers[int(sv.ID)] = net.JoinHostPort(sv.ClientAddr, strconv.Itoa(sv.ClientPort))
		}
		addr = peers[myid]
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := Start(ln, InOrder, 0)
	if peers != nil {
		// An ensemble member: the highest-numbered member that is up
		// leads; sessions are resumed on any member; the failover node
		// exists everywhere (members share no state).
		s.Mu.Lock()
		s.Resume = true
		s.Nodes[failoverPath], s.Attempted[failoverPath] = []byte{}, true
		s.Srvr = func() string { return "Zookeeper version: fake\nMode: " + memberMode(myid, peers) + "\n" }
		s.Mu.Unlock()
	}
	forceSync := "yes"
	if !cfg.ForceSync {
		forceSync = "no"
	}
	fmt.Println("fake server on", ln.Addr(), "forceSync", forceSync, "myid", myid)
	<-term
	s.Stop()
	fmt.Printf("served create %d setData %d getData %d\n", s.Count(wire.OpCreate), s.Count(wire.OpSetData), s.Count(wire.OpGetData))
	return 0
}

// memberMode is the mode of member myid: leader if no higher-numbered member
// accepts connections.
func memberMode(myid int, peers map[int]string) string {
	for id := len(peers); id > myid; id-- {
		if c, err := net.DialTimeout("tcp", peers[id], time.Second); err == nil {
			c.Close()
			return "follower" // launch.ModeFollower
		}
	}
	return "leader" // launch.ModeLeader
}
