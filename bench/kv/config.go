package kv

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is one run of the experiment.
type Config struct {
	// Workloads run in order against every system.
	Workloads []Workload
	// Records are loaded before the workloads (unmeasured).
	Records int64
	// Threads each run one operation at a time (closed loop).
	Threads int
	// Warmup is unmeasured, Duration measured, per workload.
	Warmup, Duration time.Duration
	// Seed seeds the threads' random streams (thread i uses Seed+i).
	Seed uint64
	// Systems to launch in turn, of "corral" and "etcd".
	Systems []string
	// Members per replica group (both systems).
	Members int
	// LeaderPolicies: corral runs once per entry, with
	// kv.leaderPolicy=<entry> in its zoo.cfg ("" adds no line: the
	// server's default).
	LeaderPolicies []string
	// Groups: corral runs once per entry (per leader policy): 1 is one
	// replica group of `corral server` processes, more a sharded
	// `corral kv cluster` of that many RGs, with Threads and Records
	// scaled by the entry (issue 25's scaling runs).
	Groups []int
	// Routing: each sharded run (Groups entry above 1) runs once per
	// entry: RoutingRouted, the client sends each row request to its
	// RG's leader (client-coordinated I/O), or RoutingForwarded, it
	// sends it to the endpoints, which forward it to the owner's leader
	// (the paper's Table II baseline). One RG has nothing to route.
	Routing []string
	// NoCoalesce turns off the corral client's coalescing of concurrent
	// Gets into MultiGets (kvclient.Config.NoCoalesce), for an A/B.
	NoCoalesce bool
	// ServerOpts are extra zoo.cfg lines (key=value) for every corral
	// member.
	ServerOpts []string
	// Durability is corral's durability key: sync, async or diskless.
	// etcd always syncs its WAL. Durabilities, if set, runs corral once
	// per entry (per policy and group count; Durability is then each
	// run's entry); empty, it is [Durability].
	Durability   string
	Durabilities []string
	// CompactionSample is how often a one-RG corral run reads each
	// member's compaction state during a measured interval
	// (compaction.go); 0 reads none.
	CompactionSample time.Duration
	// TickTimeMs is corral's tickTime.
	TickTimeMs int
	// CPUBudget gives each member its own budget (see budget.go);
	// CPUQuota is the cores a member may use under cgroup v2.
	CPUBudget bool
	CPUQuota  float64
	// Taskset pins each member to one CPU where no cgroup v2 cpu
	// controller caps it; false leaves GOMAXPROCS=1 alone as the cap.
	Taskset bool
	// CorralBin and EtcdBin are the servers' binaries.
	CorralBin, EtcdBin string
	// WorkDir is the parent of the run's temporary directory; Keep
	// keeps it. OutDir, if set, receives the series CSV (the command
	// writes report.md and results.jsonl there).
	WorkDir string
	Keep    bool
	OutDir  string
	// StartTimeout bounds each system's start.
	StartTimeout time.Duration
	// OpTimeout bounds each operation, retries included.
	OpTimeout time.Duration
	// CommandLine is reported as given.
	CommandLine string
	Log         *slog.Logger
	// ClusterLogLevel is a sharded cluster's -log-level ("" is warn);
	// the outage experiment reads the members' role changes at info.
	ClusterLogLevel string
}

// Limits of the configuration.
const (
	MaxRecords = 10_000_000
	MaxThreads = 1024
	MaxMembers = 7
	MaxGroups  = 16
	MaxPhase   = time.Hour
	// MinCompactionSample bounds -compaction-sample from below.
	MinCompactionSample = 10 * time.Millisecond
	// SeriesBucket is the width of the throughput-over-time series.
	SeriesBucket = 100 * time.Millisecond
)

// Routing modes of a sharded run.
const (
	RoutingRouted    = "routed"
	RoutingForwarded = "forwarded"
)

// Systems this experiment launches.
const (
	SystemCorral = "corral"
	SystemEtcd   = "etcd"
)

// LeaderPolicies are the values --leader-policy knows (the server
// decides what each means; "fixed" never moves leadership for
// compaction).
var LeaderPolicies = []string{"fixed", "random", "roundrobin", "coolest"}

// DefaultConfig is the default run: the paper's one RG of 3, sized for
// a small machine.
func DefaultConfig() Config {
	wl, _ := ParseWorkloads(DefaultWorkloads)
	return Config{
		Workloads:        wl,
		Records:          10_000,
		Threads:          16,
		Warmup:           2 * time.Second,
		Duration:         10 * time.Second,
		Seed:             1,
		Systems:          []string{SystemCorral, SystemEtcd},
		Members:          3,
		Durability:       "sync",
		TickTimeMs:       500,
		CompactionSample: 100 * time.Millisecond,
		CPUBudget:        true,
		CPUQuota:         1,
		Taskset:          true,
		EtcdBin:          "etcd",
		StartTimeout:     60 * time.Second,
		OpTimeout:        10 * time.Second,
	}
}

// Fill checks c and fills its zero fields with the defaults.
func (c *Config) Fill() error {
	d := DefaultConfig()
	if c.Workloads == nil {
		c.Workloads = d.Workloads
	}
	if c.Systems == nil {
		c.Systems = d.Systems
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, p := range []*time.Duration{&c.StartTimeout, &c.OpTimeout} {
		if *p == 0 {
			*p = 10 * time.Second
		}
	}
	if c.TickTimeMs == 0 {
		c.TickTimeMs = d.TickTimeMs
	}
	if c.CPUQuota == 0 {
		c.CPUQuota = d.CPUQuota
	}
	if c.EtcdBin == "" {
		c.EtcdBin = d.EtcdBin
	}
	if len(c.Groups) == 0 {
		c.Groups = []int{1}
	}
	for _, g := range c.Groups {
		if g < 1 || g > MaxGroups {
			return fmt.Errorf("groups must be in [1, %d]", MaxGroups)
		}
		if int64(g)*c.Records > MaxRecords || g*c.Threads > MaxThreads {
			return fmt.Errorf("%d groups scale records and threads past %d and %d", g, MaxRecords, MaxThreads)
		}
	}
	if len(c.LeaderPolicies) == 0 {
		c.LeaderPolicies = []string{""}
	}
	if len(c.Routing) == 0 {
		c.Routing = []string{RoutingRouted}
	}
	for _, r := range c.Routing {
		if r != RoutingRouted && r != RoutingForwarded {
			return fmt.Errorf("routing %q: want %s or %s", r, RoutingRouted, RoutingForwarded)
		}
	}
	if err := CheckLoad(c.Records, c.Threads, c.Members, 1); err != nil {
		return err
	}
	switch {
	case c.Duration <= 0 || c.Duration > MaxPhase || c.Warmup < 0 || c.Warmup > MaxPhase:
		return fmt.Errorf("duration must be in (0, %v] and warmup in [0, %v]", MaxPhase, MaxPhase)
	case c.CPUQuota < 0.01 || c.CPUQuota > 64:
		return errors.New("cpu quota must be in [0.01, 64] cores")
	case c.TickTimeMs < 1 || c.TickTimeMs > 60000:
		return errors.New("tick time must be in [1, 60000] ms")
	}
	if len(c.Durabilities) == 0 {
		c.Durabilities = []string{c.Durability}
	}
	c.Durability = c.Durabilities[0]
	for _, d := range c.Durabilities {
		if err := CheckDurability(d); err != nil {
			return err
		}
	}
	if c.CompactionSample != 0 && (c.CompactionSample < MinCompactionSample || c.CompactionSample > MaxPhase) {
		return fmt.Errorf("compaction sample must be 0 (none) or in [%v, %v]", MinCompactionSample, MaxPhase)
	}
	for _, s := range c.Systems {
		if s != SystemCorral && s != SystemEtcd {
			return fmt.Errorf("system %q: want corral or etcd", s)
		}
	}
	for _, p := range c.LeaderPolicies {
		if p != "" && !slices.Contains(LeaderPolicies, p) {
			return fmt.Errorf("leader policy %q: want one of %s", p, strings.Join(LeaderPolicies, ", "))
		}
	}
	for _, o := range c.ServerOpts {
		k, _, ok := strings.Cut(o, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.ContainsAny(o, "\n\r") {
			return fmt.Errorf("server option %q: want key=value on one line", o)
		}
	}
	return nil
}

// CheckLoad checks the load and group shape both experiments share:
// records, threads, and members per RG from minMembers.
func CheckLoad(records int64, threads, members, minMembers int) error {
	switch {
	case records < 1 || records > MaxRecords:
		return fmt.Errorf("records must be in [1, %d]", MaxRecords)
	case threads < 1 || threads > MaxThreads:
		return fmt.Errorf("threads must be in [1, %d]", MaxThreads)
	case members < minMembers || members > MaxMembers:
		if minMembers > 1 {
			return fmt.Errorf("members must be in [%d, %d]: a group must survive its leader", minMembers, MaxMembers)
		}
		return fmt.Errorf("members must be in [%d, %d]", minMembers, MaxMembers)
	}
	return nil
}

// CheckDurability checks a corral durability mode.
func CheckDurability(d string) error {
	switch d {
	case "sync", "async", "diskless":
		return nil
	}
	return fmt.Errorf("durability %q: want sync, async or diskless", d)
}

// corralName is the report's name of corral run with leader policy p
// and g replica groups.
func corralName(p string, g int) string { return corralRunName(p, "", g, RoutingRouted) }

// corralRunName is corralName for a run of durability dur ("": the only
// one, not named) routed as routing says: a forwarded run is tagged so,
// and forms its own scaling series.
func corralRunName(p, dur string, g int, routing string) string {
	var tags []string
	if p != "" {
		tags = append(tags, p)
	}
	if dur != "" {
		tags = append(tags, dur)
	}
	if routing == RoutingForwarded {
		tags = append(tags, RoutingForwarded)
	}
	if g > 1 {
		tags = append(tags, "g="+strconv.Itoa(g))
	}
	if len(tags) == 0 {
		return SystemCorral
	}
	return SystemCorral + "[" + strings.Join(tags, ",") + "]"
}
