package kvserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/transport"
)

// LocalGroup describes a replica group of n members on loopback, each
// with listeners already open on free ports, so every address is known
// before any member starts.
type LocalGroup struct {
	Configs []Config
}

// NewLocalGroup opens 3n loopback listeners and returns the members'
// configurations under dir/memberN. On error nothing stays open.
func NewLocalGroup(n int, dir string, mode replica.Mode, tick time.Duration, logger *slog.Logger) (*LocalGroup, error) {
	if n < 1 {
		return nil, fmt.Errorf("kvserver: %d members", n)
	}
	var opened []net.Listener
	listen := func() (net.Listener, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			opened = append(opened, l)
		}
		return l, err
	}
	peers := make(map[uint64]transport.Peer)
	apis := make(map[uint64]string)
	g := &LocalGroup{}
	for i := 1; i <= n; i++ {
		q, err := listen()
		if err == nil {
			var e, a net.Listener
			if e, err = listen(); err == nil {
				if a, err = listen(); err == nil {
					id := uint64(i)
					peers[id] = transport.Peer{QuorumAddr: q.Addr().String(), ElectionAddr: e.Addr().String()}
					apis[id] = a.Addr().String()
					g.Configs = append(g.Configs, Config{
						ID: id, Peers: peers, APIAddrs: apis, Dir: filepath.Join(dir, fmt.Sprintf("member%d", i)),
						Mode: mode, TickTime: tick, Logger: logger.With("member", i),
						QuorumListener: q, ElectionListener: e, APIListener: a,
					})
					continue
				}
			}
		}
		for _, l := range opened {
			l.Close()
		}
		return nil, err
	}
	return g, nil
}

// Endpoints are the members' API addresses in id order.
func (g *LocalGroup) Endpoints() []string {
	var eps []string
	for _, c := range g.Configs {
		eps = append(eps, c.APIAddrs[c.ID])
	}
	return eps
}

// Run runs every member until ctx ends; ready is called once all serve.
func (g *LocalGroup) Run(ctx context.Context, ready func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(g.Configs))
	var readyWG sync.WaitGroup
	readyWG.Add(len(g.Configs))
	for i, c := range g.Configs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			once := sync.OnceFunc(readyWG.Done)
			defer once()
			if err := Run(ctx, c, func(string) { once() }); err != nil {
				errs[i] = fmt.Errorf("member %d: %w", c.ID, err)
				cancel()
			}
		}()
	}
	go func() {
		readyWG.Wait()
		if ctx.Err() == nil && ready != nil {
			ready()
		}
	}()
	wg.Wait()
	return errors.Join(errs...)
}
