package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/loopport"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/kvserver"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/replica"
)

// runKVCluster starts a sharded cluster on loopback: a configuration
// manager (a corral coordination ensemble, in this process) and -replicas
// storage nodes, each hosting one member of every one of -groups replica
// groups (in this process, or each its own `corral kv node` process with
// -spawn). It prints "kv endpoints: HOST:PORT,..." and "configuration
// manager: CONNECT_STRING" once every RG has recorded its leader, and
// stops on SIGINT or SIGTERM.
func runKVCluster(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kv cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	groups := fs.Int("groups", 2, "replica groups (RGs)")
	replicas := fs.Int("replicas", 3, "members per RG (and storage nodes)")
	tokens := fs.Int("tokens", 8, "tokens per RG on the hash ring")
	cmN := fs.Int("cm", 3, "servers of the configuration manager's ensemble")
	cmPort := fs.Int("cm-port", 0, "the configuration manager's first port: it uses 3 x -cm ports from there (0: picked)")
	dir := fs.String("dir", "", "data directory (default: a new temporary directory)")
	logLevel := fs.String("log-level", "warn", "debug|info|warn|error")
	durability := fs.String("durability", "sync", "sync|async|diskless")
	tick := fs.Duration("tick", 500*time.Millisecond, "tickTime of the RGs")
	spawn := fs.Bool("spawn", false, "run each storage node as its own process (corral kv node)")
	tf := registerKVTuning(fs)
	metricsPort := fs.Int("metrics-port", 0, "serve node i's Prometheus metrics on 127.0.0.1:PORT+i-1 (0: none)")
	if err := fs.Parse(args); err != nil {
		return kvExitError
	}
	if fs.NArg() != 0 || *groups < 1 || *replicas < 1 || *cmN < 1 || *tokens < 1 || *cmPort < 0 || *cmPort+3**cmN > 65536 {
		fmt.Fprintln(stderr, "usage: corral kv cluster [-groups 2] [-replicas 3] [-cm 3] [-cm-port P] [-dir D] (counts at least 1)")
		return kvExitError
	}
	mode, err := parseDurability(*durability)
	if err != nil {
		fmt.Fprintln(stderr, "corral kv cluster:", err)
		return kvExitError
	}
	tune, err := tf.tuning()
	if err != nil {
		fmt.Fprintln(stderr, "corral kv cluster:", err)
		return kvExitError
	}
	base := *dir
	if base == "" {
		d, err := os.MkdirTemp("", "corral-kv-cluster-")
		if err != nil {
			return kvFail(stderr, "cluster", err)
		}
		base = d
	}
	logger := newLogger(*logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// The configuration manager.
	cfgs, err := cmEnsemble(*cmN, *cmPort, filepath.Join(base, "cm"))
	if err != nil {
		return kvFail(stderr, "cluster", err)
	}
	var addrs []string
	for _, c := range cfgs {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", fmt.Sprint(c.ClientPort)))
		if err := prepareDataDir(c); err != nil {
			return kvFail(stderr, "cluster", err)
		}
	}
	cmConnect := strings.Join(addrs, ",")
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, c := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serve(ctx, c, "", logger.With("cm", c.MyID), nil, nil); err != nil && ctx.Err() == nil {
				cancel(fmt.Errorf("configuration manager %d: %w", c.MyID, err))
			}
		}()
	}

	lc, err := kvserver.NewLocalCluster(*groups, *replicas, base, mode, *tick, cmConnect, cm.DefaultRoot, logger)
	if err != nil {
		cancel(err)
		return kvFail(stderr, "cluster", err)
	}
	if err := lc.Tune(tune.leaderChange, tune.memTableSize); err != nil {
		lc.CloseListeners()
		cancel(err)
		return kvFail(stderr, "cluster", err)
	}
	var metrics []string
	if *metricsPort != 0 {
		if metrics, err = lc.ServeMetrics(*metricsPort); err != nil {
			lc.CloseListeners()
			cancel(err)
			return kvFail(stderr, "cluster", err)
		}
	}
	if err := initCM(ctx, cmConnect, lc, *tokens); err != nil {
		if ctx.Err() != nil {
			// Canceled by a failure elsewhere (a configuration
			// manager server that could not start): say which.
			err = context.Cause(ctx)
		}
		lc.CloseListeners()
		cancel(err)
		return kvFail(stderr, "cluster", err)
	}
	var pids []string
	if *spawn {
		lc.CloseListeners()
		self, err := os.Executable()
		if err != nil {
			cancel(err)
			return kvFail(stderr, "cluster", err)
		}
		for i, f := range lc.Files {
			cmd := exec.Command(self, "kv", "node", "-config", f, "-log-level", *logLevel)
			cmd.Stderr = stderr
			setParentDeathSignal(cmd)
			if err := cmd.Start(); err != nil {
				cancel(err)
				return kvFail(stderr, "cluster", err)
			}
			pids = append(pids, fmt.Sprintf("kv node %d: pid %d api %s", i+1, cmd.Process.Pid, lc.Nodes[i].APIListen))
			wg.Add(1)
			go func() {
				defer wg.Done()
				done := make(chan struct{})
				go func() {
					select {
					case <-ctx.Done():
						cmd.Process.Signal(syscall.SIGTERM)
					case <-done:
					}
				}()
				err := cmd.Wait()
				close(done)
				if err != nil && ctx.Err() == nil {
					logger.Warn("kv node exited", "node", i+1, "err", err)
				}
			}()
		}
	} else {
		for _, nc := range lc.Nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := kvserver.RunNode(ctx, nc, nil); err != nil && ctx.Err() == nil {
					cancel(err)
				}
			}()
		}
	}
	if err := waitLeaders(ctx, cmConnect, lc, 20*(*tick)); err != nil {
		cancel(err)
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return kvExitOK
		}
		return kvFail(stderr, "cluster", err)
	}
	where := "in this process"
	if *spawn {
		where = "one process per node"
	}
	fmt.Fprintf(stdout, "corral kv: sharded cluster of %d RGs x %d replicas on %d nodes (%s, %s), data in %s\n",
		*groups, *replicas, *replicas, where, mode, filepath.Clean(base))
	for _, p := range pids {
		fmt.Fprintln(stdout, p)
	}
	if len(metrics) > 0 {
		fmt.Fprintf(stdout, "kv metrics: %s\n", strings.Join(metrics, ","))
	}
	fmt.Fprintf(stdout, "kv endpoints: %s\nconfiguration manager: %s\n(Ctrl-C to stop)\n", strings.Join(lc.Endpoints(), ","), cmConnect)
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	<-ctx.Done()
	cancel(nil)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return kvFail(stderr, "cluster", cause)
	}
	return kvExitOK
}

func parseDurability(s string) (replica.Mode, error) {
	switch s {
	case "sync":
		return replica.Sync, nil
	case "async":
		return replica.Async, nil
	case "diskless":
		return replica.Diskless, nil
	}
	return replica.Sync, fmt.Errorf("-durability %q: want sync, async or diskless", s)
}

// cmEnsemble is the configuration manager's ensemble of n servers under
// dir, without AdminServers, on the 3n loopback ports from first on (0:
// ports below the kernel's ephemeral range that were free a moment ago,
// internal/loopport).
func cmEnsemble(n, first int, dir string) ([]*config.Config, error) {
	cfgs := config.LocalEnsemble(n, dir, 2181)
	if cfgs == nil {
		return nil, fmt.Errorf("-cm %d: too many servers", n)
	}
	var ports []int
	if first != 0 {
		for p := first; p < first+3*n; p++ {
			ports = append(ports, p)
		}
	} else {
		var err error
		if ports, err = loopport.Pick(3 * n); err != nil {
			return nil, err
		}
	}
	for i, c := range cfgs {
		c.ClientPort = ports[i]
		c.TickTime = 500
		c.MinSessionTimeout, c.MaxSessionTimeout = 2*c.TickTime, 60*c.TickTime
		c.Admin.EnableServer = false
		for j := range c.Servers {
			c.Servers[j].ClientPort = ports[j]
			c.Servers[j].QuorumPort = ports[n+j]
			c.Servers[j].ElectionPort = ports[2*n+j]
		}
	}
	return cfgs, nil
}

// initCM registers the cluster's RGs and stores the first ring, unless
// one is stored already (a cluster started again on its directory).
func initCM(ctx context.Context, servers string, lc *kvserver.LocalCluster, tokens int) error {
	conn, err := client.Connect(ctx, strings.Split(servers, ","), client.SessionTimeout(cm.SessionTimeout))
	if err != nil {
		return fmt.Errorf("configuration manager: %w", err)
	}
	defer conn.Close()
	s, err := cm.NewStore(conn, cm.DefaultRoot)
	if err != nil {
		return err
	}
	var gs []ring.GroupID
	for g, gi := range lc.Registrations() {
		if err := s.RegisterGroup(ctx, g, gi); err != nil {
			return err
		}
		gs = append(gs, g)
	}
	r, err := ring.Build(gs, tokens, 0)
	if err != nil {
		return err
	}
	if err := s.Init(ctx, r); err != nil && !errors.Is(err, cm.ErrInitialized) {
		return err
	}
	return nil
}

// waitLeaders waits until each RG has recorded a leader, and for a while
// (settle) until that leader is the RG's preferred one: a fresh RG hands
// its first leadership over, and scripts should find the leaders where
// they stay.
func waitLeaders(ctx context.Context, servers string, lc *kvserver.LocalCluster, settle time.Duration) error {
	conn, err := client.Connect(ctx, strings.Split(servers, ","), client.SessionTimeout(cm.SessionTimeout))
	if err != nil {
		return err
	}
	defer conn.Close()
	s, err := cm.NewStore(conn, cm.DefaultRoot)
	if err != nil {
		return err
	}
	preferred := map[ring.GroupID]uint64{}
	for _, n := range lc.Nodes {
		for g, c := range n.Groups {
			preferred[g] = c.PreferredLeader
		}
	}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var settled <-chan time.Time
	for {
		all, pref := true, true
		for g, p := range preferred {
			l, ok, err := s.Leader(ctx, g)
			if err != nil || !ok {
				all = false
				break
			}
			if p != 0 && l.ID != p {
				pref = false
			}
		}
		if all && settled == nil {
			settled = time.After(settle)
		}
		if all && pref {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-settled:
			return nil // a hand-over failed: the leaders stay where they are
		case <-t.C:
		}
	}
}

// runKVNode runs one storage node of a sharded cluster from its
// node.json (written by `corral kv cluster`).
func runKVNode(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kv node", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "the node's node.json")
	logLevel := fs.String("log-level", "warn", "debug|info|warn|error")
	if err := fs.Parse(args); err != nil {
		return kvExitError
	}
	if *file == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: corral kv node -config NODE.json")
		return kvExitError
	}
	logger := newLogger(*logLevel)
	nc, err := kvserver.ReadNodeFile(*file, logger)
	if err != nil {
		return kvFail(stderr, "node", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = kvserver.RunNode(ctx, nc, func(addr string) {
		logger.Info("kv node serving", "api", addr, "groups", len(nc.Groups))
	})
	if err != nil {
		return kvFail(stderr, "node", err)
	}
	return kvExitOK
}
