package kv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/client/kvclient"
)

// corralZooCfg is member id's zoo.cfg (store=kv): every member shares
// the lines but dataDir, apiPort and clientPort. extra are appended
// as given (--leader-policy's kv.leaderPolicy line and --server-opt).
func corralZooCfg(id int, dataDir string, tickMs int, durability string, quorum, election, api []int, extra []string) string {
	var b strings.Builder
	p := func(k, v string) { b.WriteString(k + "=" + v + "\n") }
	p("tickTime", strconv.Itoa(tickMs))
	p("initLimit", "10")
	p("syncLimit", "5")
	p("dataDir", dataDir)
	// A kv member serves no ZooKeeper clients; the API port stands in
	// for clientPort as `corral kv ensemble` writes it.
	p("clientPort", strconv.Itoa(api[id-1]))
	p("clientPortAddress", "127.0.0.1")
	p("store", "kv")
	p("apiPort", strconv.Itoa(api[id-1]))
	p("apiPortAddress", "127.0.0.1")
	if durability != "" {
		p("durability", durability)
	}
	for i := range api {
		p("apiAddress."+strconv.Itoa(i+1), "127.0.0.1:"+strconv.Itoa(api[i]))
	}
	for i := range quorum {
		p("server."+strconv.Itoa(i+1), fmt.Sprintf("127.0.0.1:%d:%d", quorum[i], election[i]))
	}
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	return b.String()
}

// extraLines are the zoo.cfg lines a corral run adds: policy's
// kv.leaderPolicy (none for "") and opts as given.
func extraLines(policy string, opts []string) []string {
	var out []string
	if policy != "" {
		out = append(out, LeaderPolicyKey+"="+policy)
	}
	return append(out, opts...)
}

// LeaderPolicyKey is the zoo.cfg key --leader-policy sets: the
// compaction-aware leader change's policy.
const LeaderPolicyKey = "kv.leaderPolicy"

// launchCorral starts a replica group of n `corral server` processes
// under dir and waits until its leader accepts a table.
func launchCorral(ctx context.Context, cfg *Config, name, policy, dir string, bgt *budgeter) (*System, error) {
	n := cfg.Members
	ports, err := launch.FreePorts(4 * n)
	if err != nil {
		return nil, err
	}
	quorum, election, api, mport := ports[:n], ports[n:2*n], ports[2*n:3*n], ports[3*n:]
	s := &System{Name: name, Kind: "corral", log: cfg.Log, Policy: policy, Durability: cfg.Durability}
	var endpoints []string
	for id := 1; id <= n; id++ {
		mdir := filepath.Join(dir, "m"+strconv.Itoa(id))
		if err := os.MkdirAll(mdir, 0o755); err != nil {
			s.Stop()
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(mdir, "myid"), []byte(strconv.Itoa(id)+"\n"), 0o644); err != nil {
			s.Stop()
			return nil, err
		}
		extra := extraLines(policy, cfg.ServerOpts)
		if cfg.CompactionSample > 0 {
			extra = append(extra, metricsLines(mport[id-1])...)
			s.metrics = append(s.metrics, "127.0.0.1:"+strconv.Itoa(mport[id-1]))
		}
		zc := corralZooCfg(id, mdir, cfg.TickTimeMs, cfg.Durability, quorum, election, api, extra)
		if id == 1 {
			s.Config = zc
		}
		cfgPath := filepath.Join(mdir, "zoo.cfg")
		if err := os.WriteFile(cfgPath, []byte(zc), 0o644); err != nil {
			s.Stop()
			return nil, err
		}
		bg, err := bgt.assign(strings.NewReplacer("[", "-", "]", "").Replace(name) + "-m" + strconv.Itoa(id))
		if err != nil {
			s.Stop()
			return nil, err
		}
		m, err := s.startMember(fmt.Sprintf("%s m%d", name, id), []string{cfg.CorralBin, "server", cfgPath}, bg, mdir, filepath.Join(dir, "m"+strconv.Itoa(id)+".log"))
		if err != nil {
			s.Stop()
			return nil, err
		}
		m.Addr = "127.0.0.1:" + strconv.Itoa(api[id-1])
		endpoints = append(endpoints, m.Addr)
	}
	if err := s.connectCorral(ctx, cfg, endpoints, false); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// connectCorral gives a corral system its client over endpoints and
// waits until the benchmark's table is created (a create an earlier
// attempt applied counts). With forward, row requests go to the
// endpoints, which forward them (kvclient.Config.Forward).
func (s *System) connectCorral(ctx context.Context, cfg *Config, endpoints []string, forward bool) error {
	c, err := kvclient.New(kvclient.Config{Endpoints: endpoints, Forward: forward, NoCoalesce: cfg.NoCoalesce})
	if err != nil {
		return err
	}
	s.Client = &corralStore{c: c}
	create := &kvpb.CreateTableRequest{Table: Table, Families: []*kvpb.Family{{Name: Family, MaxVersions: 1}}}
	return s.ready(ctx, cfg.StartTimeout, func(ctx context.Context) error {
		_, err := c.CreateTable(ctx, create)
		if err != nil && strings.Contains(err.Error(), "exists") {
			return nil // an earlier attempt applied
		}
		return err
	}, cfg.CorralBin, "version")
}

// corralStore drives corral through the Go kvclient.
type corralStore struct{ c *kvclient.Client }

func (s *corralStore) Read(ctx context.Context, key string) error {
	resp, err := s.c.Get(ctx, &kvpb.GetRequest{Table: Table, Row: []byte(key)})
	if err != nil {
		return err
	}
	if len(resp.Cells) != Fields {
		return fmt.Errorf("row %s: %d cells, want %d", key, len(resp.Cells), Fields)
	}
	return nil
}

func (s *corralStore) Write(ctx context.Context, key string, rec [][]byte) error {
	_, err := s.c.Put(ctx, CorralPut(key, rec))
	return err
}

func (s *corralStore) Scan(ctx context.Context, key string, n int) error {
	_, err := s.c.Scan(ctx, &kvpb.ScanRequest{Table: Table, From: []byte(key), Limit: uint32(n)})
	return err
}

func (s *corralStore) Close() error { return s.c.Close() }
