package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/replica/snapstream"
)

// Options describe one simulated run. RandomOptions derives them from a
// seed, so the seed alone reproduces a run.
type Options struct {
	Seed      uint64
	Voters    int
	Observers int
	Mode      Mode

	// Duration is the length of the fault phase, in time units; Settle
	// bounds the final phase in which faults are healed and the ensemble
	// must converge.
	Duration int64
	Settle   int64
	// TickEvery is the number of time units per zab tick; messages take
	// 1..MaxDelay units and fsyncs 1..MaxSyncDelay.
	TickEvery int64
	// ClockDrift makes each server's tick period differ from TickEvery
	// by up to this fraction, so timeouts expire unevenly.
	ClockDrift   float64
	MaxDelay     int64
	MaxSyncDelay int64

	MaxCounter    uint32 // zab.Config.MaxCounter (0: default)
	MaxBatchBytes uint64 // zab.Config.MaxBatchBytes (0: default)
	Compact       bool   // take snapshots and compact logs
	// SnapCount is the snapshot scheduler's write count (Compact in sync
	// and async modes; busy snapshots in diskless mode), SnapBytes its
	// byte trigger (replica.Schedule.SnapBytes; 0: none).
	SnapCount int
	SnapBytes int64
	// Slim makes each server's disk a replica.Slimmer (slimDisk): the
	// driver keeps a token in place of every entry durable and applied,
	// and the disk rebuilds it.
	Slim bool
	// Breaks deliberately break a rule of the driver (the simulator's
	// self-test, bite_test.go).
	Breaks replica.Breaks
	// StaleReads breaks the workload's confirmed reads: a leader answers
	// them from its state at once, as ZooKeeper answers getData, without
	// confirming its leadership (the linearizability check's self-test).
	StaleReads bool
	// OutcomesOnly turns off the checks of the driver's rules (Persisted
	// before ACK, the recovering vote, the diskless log cut), leaving the
	// outcomes (agreeing prefixes, nothing committed lost, liveness): the
	// self-test measures how soon a broken rule shows in them.
	OutcomesOnly bool
	// NoBusySnapshots turns off diskless busy snapshots (scripted tests
	// control what a restarted server has).
	NoBusySnapshots bool

	// SnapTransfer, if positive, makes each SNAP take SnapTransfer/2..
	// SnapTransfer time units to cross its link, reporting progress at both ends as it
	// moves; SnapStall is the probability that one stalls part of the way
	// until the sender's write timeout breaks the link (transfer.go).
	SnapTransfer int64
	SnapStall    float64

	// Per time unit probabilities.
	ProposeRate   float64
	CrashRate     float64
	PartitionRate float64
	BreakRate     float64
	PauseRate     float64
	SlowRate      float64
	// LeaderFaultRate is the probability per time unit of crashing,
	// isolating or pausing the current leader.
	LeaderFaultRate float64
	// TransferRate is the probability per time unit of asking an
	// established leader to transfer leadership to a random member.
	TransferRate float64

	// Clients is the number of register workload clients (workload.go);
	// 0: no workload and no linearizability check.
	Clients int

	// ReconfigRate is the probability per time unit of asking the leader
	// to change one server's role; Spares are servers started outside the
	// configuration that changes may add (reconfig.go).
	ReconfigRate float64
	Spares       int

	// StreamPiece, if positive, streams every SNAP's image ahead of it in
	// pieces of that many bytes, as deployed members do (stream.go);
	// A link takes StreamRate pieces every StreamEvery time units;
	// StreamBreaks breaks the learner's rules (the self-test).
	StreamPiece  int
	StreamRate   int
	StreamEvery  int64
	StreamBreaks snapstream.Breaks

	TraceLen int

	// Machines makes the servers' state machines and the proposals; nil
	// runs the hash chain (machine).
	Machines Machines
}

func (o Options) String() string {
	s := fmt.Sprintf("seed=%d voters=%d observers=%d mode=%v duration=%d settle=%d tick=%d maxCounter=%d maxBatch=%d compact=%v snapCount=%d snapBytes=%d "+
		"drift=%.2f maxDelay=%d maxSyncDelay=%d rates(propose=%.3f crash=%.4f partition=%.4f break=%.4f pause=%.4f slow=%.4f leader=%.4f transfer=%.4f) clients=%d reconfig=%.4f spares=%d",
		o.Seed, o.Voters, o.Observers, o.Mode, o.Duration, o.Settle, o.TickEvery, o.MaxCounter, o.MaxBatchBytes, o.Compact, o.SnapCount, o.SnapBytes,
		o.ClockDrift, o.MaxDelay, o.MaxSyncDelay, o.ProposeRate, o.CrashRate, o.PartitionRate, o.BreakRate, o.PauseRate, o.SlowRate,
		o.LeaderFaultRate, o.TransferRate, o.Clients, o.ReconfigRate, o.Spares)
	// The self-tests' switches, only when set.
	if o.Breaks != (replica.Breaks{}) {
		s += fmt.Sprintf(" breaks=%+v", o.Breaks)
	}
	if o.StaleReads {
		s += " staleReads"
	}
	if o.OutcomesOnly {
		s += " outcomesOnly"
	}
	if o.NoBusySnapshots {
		s += " noBusySnapshots"
	}
	if o.Slim {
		s += " slim"
	}
	if o.SnapTransfer > 0 {
		s += fmt.Sprintf(" snapTransfer=%d snapStall=%.2f", o.SnapTransfer, o.SnapStall)
	}
	if o.StreamPiece > 0 {
		s += fmt.Sprintf(" streamPiece=%d streamRate=%d/%d", o.StreamPiece, o.StreamRate, o.StreamEvery)
	}
	if o.StreamBreaks != (snapstream.Breaks{}) {
		s += fmt.Sprintf(" streamBreaks=%+v", o.StreamBreaks)
	}
	return s
}

// RandomOptions picks a scenario from seed: ensemble size, durability
// mode, counter limit, compaction and fault rates all vary.
func RandomOptions(seed uint64) Options {
	r := rand.New(rand.NewPCG(seed, 0x6f707473))
	o := Options{
		Seed:         seed,
		Duration:     2000 + r.Int64N(3000),
		Settle:       6000,
		TickEvery:    10,
		MaxDelay:     1 + r.Int64N(6),
		MaxSyncDelay: 1 + r.Int64N(8),
		TraceLen:     400,
	}
	switch x := r.IntN(100); {
	case x < 5:
		o.Voters = 1
	case x < 10:
		o.Voters = 2
	case x < 50:
		o.Voters = 3
	case x < 60:
		o.Voters = 4
	case x < 93:
		o.Voters = 5
	default:
		o.Voters = 7
	}
	switch x := r.IntN(10); {
	case x < 7:
	case x < 9:
		o.Observers = 1
	default:
		o.Observers = 2
	}
	if r.IntN(4) == 0 {
		o.Mode = ModeDiskless
	}
	if r.IntN(5) == 0 {
		o.MaxCounter = 2 + uint32(r.IntN(40))
	}
	if r.IntN(4) == 0 {
		o.MaxBatchBytes = 8 + uint64(r.IntN(64))
	}
	o.Compact = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		o.ClockDrift = r.Float64() * 0.4
	}
	o.ProposeRate = 0.05 + r.Float64()*0.4
	// A third of the runs are stormy: faults several times as often,
	// messages and fsyncs slower than a tick, the leader targeted.
	storm := 1.0
	if r.IntN(3) == 0 {
		storm = 4
		o.MaxDelay = 1 + r.Int64N(20)
		o.MaxSyncDelay = 1 + r.Int64N(40)
	}
	o.CrashRate = r.Float64() * 0.004 * storm
	o.PartitionRate = r.Float64() * 0.003 * storm
	o.BreakRate = r.Float64() * 0.01 * storm
	o.PauseRate = r.Float64() * 0.003 * storm
	o.SlowRate = r.Float64() * 0.005 * storm
	o.LeaderFaultRate = r.Float64() * 0.002 * storm
	// Drawn last, so the draws above mean what they did before the
	// simulator ran replica/.
	o.SnapCount = 4 + r.IntN(60)
	if o.Mode == ModeSync && r.IntN(3) == 0 {
		o.Mode = ModeAsync
	}
	// Drawn after everything else, for the same reason.
	o.TransferRate = r.Float64() * 0.004
	o.Clients = 1 + r.IntN(4)
	// Reconfiguration draws come after main's, for the same reason.
	randomReconfigOptions(r, &o)
	// Drawn after everything else, for the same reason: a third of the
	// runs send SNAPs that take from a quarter of InitLimit to four and a
	// half InitLimits to transfer, some of which stall (transfer.go).
	if r.IntN(3) == 0 {
		o.SnapTransfer = initLimit*o.TickEvery/2 + r.Int64N(4*initLimit*o.TickEvery)
		o.SnapStall = r.Float64() * 0.3
	}
	// Drawn after everything else, for the same reason: a third of the
	// runs also snapshot by bytes written, a few entries' worth.
	if r.IntN(3) == 0 {
		o.SnapBytes = 256 + r.Int64N(8192)
	}
	// Drawn after everything else, for the same reason: half the runs
	// slim the in-memory log (replica.Slimmer; no effect in diskless).
	o.Slim = r.IntN(2) == 0
	// Drawn after everything else, for the same reason: three runs in
	// four stream their SNAPs (stream.go), as deployed members do, in
	// pieces of 4 B to 4 KiB (the hash chain's image is 52 bytes), 1 to
	// 8 of them every 1 to 10 time units.
	if r.IntN(4) != 0 {
		o.StreamPiece = 4 << r.IntN(11)
		o.StreamRate = 1 + r.IntN(8)
		o.StreamEvery = 1 + r.Int64N(10)
	}
	return o
}
