package kvserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"

	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/kv/ring"
)

// nodeMetrics is a storage node's metrics endpoint: one registry with
// each local replica's figures (metrics.go) labelled by its RG
// (group="N"), and the node's API calls. A nil *nodeMetrics serves
// nothing.
type nodeMetrics struct {
	lis     net.Listener
	req     *requestMetrics
	runtime bool
	// stop ends the endpoint; done is closed once it has stopped.
	stop context.CancelFunc
	done chan struct{}
}

// openNodeMetrics opens cfg's metrics listener, if it asks for one.
func openNodeMetrics(cfg NodeConfig) (*nodeMetrics, error) {
	lis := cfg.MetricsListener
	if lis == nil && cfg.MetricsListen == "" {
		return nil, nil
	}
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			return nil, fmt.Errorf("kvserver: metrics listener: %w", err)
		}
	}
	return &nodeMetrics{lis: lis, req: newRequestMetrics(), runtime: cfg.MetricsRuntime}, nil
}

// apiOptions are the API server's options that feed the endpoint.
func (m *nodeMetrics) apiOptions() apisrv.Options {
	if m == nil {
		return apisrv.Options{}
	}
	return apisrv.Options{UnaryInterceptors: []grpc.UnaryServerInterceptor{m.req.interceptor}}
}

// serve registers reps and serves until ctx ends or close is called.
func (m *nodeMetrics) serve(ctx context.Context, reps map[ring.GroupID]*replicaRun, log *slog.Logger) error {
	if m == nil {
		return nil
	}
	reg := prometheus.NewRegistry()
	err := m.req.register(reg)
	for g, r := range reps {
		wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"group": strconv.FormatUint(uint64(g), 10)}, reg)
		err = errors.Join(err, wrapped.Register(stateCollector{rep: r}), r.roles.register(wrapped))
	}
	if m.runtime {
		err = errors.Join(err, reg.Register(collectors.NewGoCollector()), reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})))
	}
	if err != nil {
		return fmt.Errorf("kvserver: metrics: %w", err)
	}
	ctx, m.stop = context.WithCancel(ctx)
	m.done = make(chan struct{})
	go func() {
		defer close(m.done)
		if err := serveMetrics(ctx, m.lis, reg); err != nil {
			log.Error("kv node: metrics endpoint stopped", "err", err)
		}
	}()
	return nil
}

// close stops the endpoint and waits for it, or closes the listener of
// one that never served.
func (m *nodeMetrics) close() {
	if m == nil {
		return
	}
	if m.stop == nil {
		m.lis.Close()
		return
	}
	m.stop()
	<-m.done
}

// ServeMetrics makes node i (from 0) of the cluster serve its metrics on
// 127.0.0.1:basePort+i and writes the node files again; it returns the
// addresses in node order.
func (lc *LocalCluster) ServeMetrics(basePort int) ([]string, error) {
	if basePort <= 0 || basePort+len(lc.Nodes)-1 > 65535 {
		return nil, fmt.Errorf("kvserver: metrics port %d: want a port with room for %d nodes", basePort, len(lc.Nodes))
	}
	var addrs []string
	for i := range lc.Nodes {
		a := net.JoinHostPort("127.0.0.1", strconv.Itoa(basePort+i))
		lc.Nodes[i].MetricsListen, lc.Nodes[i].MetricsRuntime = a, true
		addrs = append(addrs, a)
		if i < len(lc.Files) {
			if err := WriteNodeFile(lc.Files[i], lc.Nodes[i]); err != nil {
				return nil, err
			}
		}
	}
	return addrs, nil
}
