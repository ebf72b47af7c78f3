package kv

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// launchCorralCluster starts `corral kv cluster -groups g -spawn`: a
// configuration manager in that process and -members storage node
// processes (`corral kv node`), each hosting one member of every RG; the
// client routes each row to its RG's leader through the ring. Members
// inherit GOMAXPROCS=1 from the cluster process; with taskset or a
// cgroup each node process is placed after start. Server CPU is the
// cluster process's and the nodes'.
// LaunchCluster starts `corral kv cluster` with groups RGs of
// cfg.Members members under dir, each node without a CPU budget, loads
// nothing, and returns it with a client that routes to RG leaders (the
// kv-outage experiment's cluster).
func LaunchCluster(ctx context.Context, cfg *Config, groups int, dir string) (*System, error) {
	return launchCorralCluster(ctx, cfg, "corral", groups, false, dir, newBudgeter(false, 1, false, ""))
}

func launchCorralCluster(ctx context.Context, cfg *Config, name string, groups int, forward bool, dir string, bgt *budgeter) (*System, error) {
	s := &System{Name: name, Kind: "corral", Groups: groups, log: cfg.Log, Durability: cfg.Durability}
	argv := []string{cfg.CorralBin, "kv", "cluster", "-spawn",
		"-groups", strconv.Itoa(groups), "-replicas", strconv.Itoa(cfg.Members),
		"-durability", cfg.Durability, "-tick", strconv.Itoa(cfg.TickTimeMs) + "ms",
		"-dir", filepath.Join(dir, "cluster"), "-log-level", cmp.Or(cfg.ClusterLogLevel, "warn")}
	s.Config = strings.Join(argv[1:], " ")
	bg := budget{Applied: "none (--cpu-budget=false)"}
	if bgt.enabled {
		bg = budget{Wrapper: []string{"env", "GOMAXPROCS=1"}, Applied: "GOMAXPROCS=1 (configuration manager)"}
	}
	logPath := filepath.Join(dir, "cluster.log")
	m, err := s.startMember(name+" cluster", argv, bg, dir, logPath)
	if err != nil {
		return nil, err
	}
	var endpoints []string
	var nodes []ClusterNode
	err = s.waitReady(ctx, cfg.StartTimeout, func(context.Context) error {
		endpoints, nodes = ParseClusterLog(logPath)
		if len(endpoints) == 0 {
			return errors.New("no kv endpoints line yet")
		}
		return nil
	})
	if err != nil {
		s.Stop()
		return nil, err
	}
	m.Addr = "configuration manager"
	for _, n := range nodes {
		nbg, err := bgt.assign(sanitize(name) + "-node" + strconv.Itoa(n.ID))
		if err != nil {
			s.Stop()
			return nil, err
		}
		applied := "GOMAXPROCS=1 (inherited)"
		if !bgt.enabled {
			applied = nbg.Applied
		}
		if err := placeNode(ctx, n.PID, nbg); err != nil {
			s.Stop()
			return nil, err
		}
		if nbg.Cgroup != "" {
			applied += ", cgroup " + filepath.Base(nbg.Cgroup)
		} else if len(nbg.Wrapper) > 2 && nbg.Wrapper[0] == "taskset" {
			applied += ", taskset -a -pc " + nbg.Wrapper[2]
		}
		s.Members = append(s.Members, &Member{Name: fmt.Sprintf("%s node %d", name, n.ID), Addr: n.API, Budget: applied, pid: n.PID, logPath: logPath})
	}
	if err := s.connectCorral(ctx, cfg, endpoints, forward); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// ClusterNode is one storage node `corral kv cluster` started: its
// number, process and API address.
type ClusterNode struct {
	ID, PID int
	API     string
}

// ParseClusterLog reads `corral kv cluster`'s "kv node N: pid P api A"
// and "kv endpoints: ..." lines.
func ParseClusterLog(path string) (endpoints []string, nodes []ClusterNode) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "kv endpoints: "); ok {
			endpoints = strings.Split(strings.TrimSpace(rest), ",")
			continue
		}
		var n ClusterNode
		if _, err := fmt.Sscanf(line, "kv node %d: pid %d api %s", &n.ID, &n.PID, &n.API); err == nil {
			nodes = append(nodes, n)
		}
	}
	return endpoints, nodes
}

// placeNode applies a node's budget to the running process pid: every
// thread pinned with taskset, or the process moved into its cgroup.
func placeNode(ctx context.Context, pid int, bg budget) error {
	if bg.Cgroup != "" {
		return bg.join(pid)
	}
	if len(bg.Wrapper) > 2 && bg.Wrapper[0] == "taskset" {
		out, err := exec.CommandContext(ctx, "taskset", "-a", "-pc", bg.Wrapper[2], strconv.Itoa(pid)).CombinedOutput()
		if err != nil {
			return fmt.Errorf("taskset node pid %d: %v: %s", pid, err, out)
		}
	}
	return nil
}
