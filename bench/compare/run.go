package compare

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// RunConfig configures Run: one workload against servers already running.
type RunConfig struct {
	Addrs     []string
	Workload  load.Workload
	Conns     int
	Inflight  int
	ValueSize int
	Warmup    time.Duration
	Duration  time.Duration
	// Keys is how many nodes are created (unmeasured) before a set or get
	// phase.
	Keys int64
	// ServerPID, if not 0, is a local server process whose CPU is measured.
	ServerPID int
	// Rate, if positive, runs the measured phase open loop at Rate
	// requests per second in total (see openloop.go); the unmeasured
	// creation of keys stays closed loop.
	Rate float64
	// Client drives the measured phase: ClientLoad (the default) or
	// ClientGozk; the unmeasured creation of keys is the load generator's.
	Client string
	// Progress, if set, draws the phases' progress bars.
	Progress *load.Progress
	Log      *slog.Logger
}

// DefaultKeys is the number of nodes run creates for set and get.
const DefaultKeys = 10000

// Run measures one workload against running servers. For set and get it
// first creates Keys nodes, unmeasured.
func Run(ctx context.Context, cfg RunConfig) (*Report, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Keys <= 0 {
		cfg.Keys = DefaultKeys
	}
	if cfg.Workload == load.WorkloadSeqCreate {
		cfg.Conns, cfg.Inflight = 1, 1
	}
	if cfg.Client == "" {
		cfg.Client = ClientLoad
	}
	if cfg.Client != ClientLoad && cfg.Client != ClientGozk {
		return nil, fmt.Errorf("bench: unknown client %q (want %s or %s)", cfg.Client, ClientLoad, ClientGozk)
	}
	rep := &Report{Mode: "run", Start: time.Now(), Env: bench.NewEnv()}
	rep.Env.Conns, rep.Env.Inflight, rep.Env.ValueSize = cfg.Conns, cfg.Inflight, cfg.ValueSize
	rep.Env.Warmup, rep.Env.Duration = cfg.Warmup, cfg.Duration
	rep.Env.Rate = cfg.Rate
	rep.Client = cfg.Client
	const target = "server"
	rep.Servers = []bench.ServerInfo{{Target: target, Addr: strings.Join(cfg.Addrs, ",")}}
	if len(cfg.Addrs) > 0 {
		if out, err := load.FourLetter(ctx, cfg.Addrs[0], "srvr"); err == nil {
			rep.Servers[0].Version = launch.FirstLine(out)
		}
	}
	pc := load.PhaseConfig{
		Target: target, Addrs: cfg.Addrs, Workload: cfg.Workload, Conns: cfg.Conns, Inflight: cfg.Inflight,
		ValueSize: cfg.ValueSize, Warmup: cfg.Warmup, Duration: cfg.Duration, ServerPID: cfg.ServerPID, Log: cfg.Log,
		Rate: cfg.Rate, Progress: cfg.Progress,
	}
	if !cfg.Workload.Creates() {
		pop := pc
		pop.Workload, pop.Phase, pop.Warmup, pop.Duration, pop.MaxOps, pop.ServerPID = load.WorkloadCreate, "populate", 0, bench.PopulateLimit, cfg.Keys, 0
		pop.Rate = 0
		cfg.Log.Info("creating keys", "keys", cfg.Keys)
		r, err := load.RunPhase(ctx, pop)
		if err != nil {
			return rep, fmt.Errorf("bench: creating %d keys: %w", cfg.Keys, err)
		}
		pc.Keys = r.Keys
	}
	runPhase := load.RunPhase
	if cfg.Client == ClientGozk {
		runPhase = runGozkPhase
	}
	r, err := runPhase(ctx, pc)
	if r.Phase != "" {
		rep.Results = append(rep.Results, r)
	}
	return rep, err
}
