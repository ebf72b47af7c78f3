package kv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/corral-db/corral/bench/launch"
)

// etcdArgv is member i's (1-based) command line: a cluster on loopback,
// each member's data directory under dir (the disk corral's members use).
func etcdArgv(bin string, i int, dir string, client, peer []int) []string {
	var cluster []string
	for j := range peer {
		cluster = append(cluster, fmt.Sprintf("e%d=http://127.0.0.1:%d", j+1, peer[j]))
	}
	cu := "http://127.0.0.1:" + strconv.Itoa(client[i-1])
	pu := "http://127.0.0.1:" + strconv.Itoa(peer[i-1])
	return []string{bin,
		"--name", "e" + strconv.Itoa(i),
		"--data-dir", dir,
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", strings.Join(cluster, ","),
		"--initial-cluster-token", "corral-bench-kv",
		"--initial-cluster-state", "new",
		"--logger", "zap", "--log-level", "warn",
	}
}

// launchEtcd starts an etcd cluster of n members under dir and waits until
// it accepts a put.
func launchEtcd(ctx context.Context, cfg *Config, dir string, bgt *budgeter) (*System, error) {
	n := cfg.Members
	ports, err := launch.FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	client, peer := ports[:n], ports[n:]
	s := &System{Name: "etcd", Kind: "etcd", log: cfg.Log}
	var endpoints []string
	for i := 1; i <= n; i++ {
		mdir := filepath.Join(dir, "e"+strconv.Itoa(i))
		if err := os.MkdirAll(mdir, 0o700); err != nil {
			s.Stop()
			return nil, err
		}
		argv := etcdArgv(cfg.EtcdBin, i, mdir, client, peer)
		if i == 1 {
			s.Config = strings.Join(argv[1:], " ")
		}
		bg, err := bgt.assign("etcd-e" + strconv.Itoa(i))
		if err != nil {
			s.Stop()
			return nil, err
		}
		m, err := s.startMember(fmt.Sprintf("etcd e%d", i), argv, bg, dir, filepath.Join(dir, "e"+strconv.Itoa(i)+".log"))
		if err != nil {
			s.Stop()
			return nil, err
		}
		m.Addr = "127.0.0.1:" + strconv.Itoa(client[i-1])
		endpoints = append(endpoints, m.Addr)
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		s.Stop()
		return nil, err
	}
	s.Client = &etcdStore{c: c}
	err = s.ready(ctx, cfg.StartTimeout, func(ctx context.Context) error {
		_, err := c.Put(ctx, Table+"-ready", "1")
		return err
	}, cfg.EtcdBin, "--version")
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// etcdStore drives etcd through its Go client (go.etcd.io/etcd/client/v3),
// which balances over the endpoints; etcd forwards a write to its leader
// and serves reads linearizably (a quorum read, clientv3's default).
type etcdStore struct{ c *clientv3.Client }

func (s *etcdStore) Read(ctx context.Context, key string) error {
	resp, err := s.c.Get(ctx, EtcdKey(key))
	if err != nil {
		return err
	}
	if len(resp.Kvs) != 1 || len(resp.Kvs[0].Value) != Fields*FieldSize {
		return fmt.Errorf("key %s: missing or short", key)
	}
	return nil
}

func (s *etcdStore) Write(ctx context.Context, key string, rec [][]byte) error {
	_, err := s.c.Put(ctx, EtcdKey(key), string(EtcdValue(rec)))
	return err
}

func (s *etcdStore) Scan(ctx context.Context, key string, n int) error {
	_, err := s.c.Get(ctx, EtcdKey(key), clientv3.WithRange(EtcdRangeEnd), clientv3.WithLimit(int64(n)))
	return err
}

func (s *etcdStore) Close() error { return s.c.Close() }

// runOutput is the first line of a short command's output.
func runOutput(ctx context.Context, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}
