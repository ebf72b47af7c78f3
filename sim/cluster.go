package sim

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/corral-db/corral/zab"
)

// Cluster is a simulated ensemble. Run drives a whole randomized run;
// tests also drive it step by step (Crash, Restart, Partition, RunFor).
type Cluster struct {
	opts    Options
	rng     *rand.Rand
	now     int64
	ids     []uint64
	voters  []uint64
	servers map[uint64]*server
	net     *network
	chk     *checker
	tr      *trace
	err     error

	faultsOn       bool
	partitionUntil int64
	proposed       int
	marker         []byte // payload of the settle phase's proposal
	markerApplied  bool
	Stats          Stats
}

// Stats summarise a run.
type Stats struct {
	Committed  int // entries in the committed history
	Proposed   int
	Delivered  int
	Dropped    int
	Crashes    int
	Partitions int
	Leaders    int // distinct established (epoch, leader) pairs
	MaxEpoch   uint32
	Syncs      [4]int // by zab.SyncMode
}

type server struct {
	id         uint64
	voter      bool
	disk       *disk
	zn         *zab.Node
	m          machine
	soft       zab.SoftState
	up         bool
	restartAt  int64
	restartM   machine
	restartRec bool
	paused     int64 // paused until
	syncAt     int64 // pending fsync completion, 0 if none
	period     int64 // time units per tick (clock drift)
	nextTick   int64
}

// Failure is an invariant violation (or a liveness failure) of one run.
type Failure struct {
	Options Options
	Time    int64
	Err     error
	Trace   []string
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed at t=%d: %v\n", f.Options.Seed, f.Time, f.Err)
	fmt.Fprintf(&b, "options: %v\n", f.Options)
	fmt.Fprintf(&b, "replay: go test ./sim/ -run 'TestSeeds$' -seed=%d -v\n", f.Options.Seed)
	fmt.Fprintf(&b, "last %d events:\n", len(f.Trace))
	for _, l := range f.Trace {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func (f *Failure) Unwrap() error { return f.Err }

// NewCluster starts every server of opts with empty storage.
func NewCluster(opts Options) *Cluster {
	if opts.TickEvery == 0 {
		opts.TickEvery = 10
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = 3
	}
	if opts.MaxSyncDelay == 0 {
		opts.MaxSyncDelay = 3
	}
	if opts.TraceLen == 0 {
		opts.TraceLen = 400
	}
	if opts.Settle == 0 {
		opts.Settle = 6000
	}
	c := &Cluster{
		opts:    opts,
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x73696d)),
		servers: map[uint64]*server{},
		chk:     newChecker(),
		tr:      newTrace(opts.TraceLen),
	}
	for i := 1; i <= opts.Voters+opts.Observers; i++ {
		id := uint64(i)
		c.ids = append(c.ids, id)
		period := opts.TickEvery
		if opts.ClockDrift > 0 {
			period = max(1, int64(float64(opts.TickEvery)*(1+opts.ClockDrift*(2*c.rng.Float64()-1))))
		}
		s := &server{id: id, voter: i <= opts.Voters, disk: newDisk(opts.Mode), period: period,
			nextTick: 1 + c.rng.Int64N(period)}
		if s.voter {
			c.voters = append(c.voters, id)
		}
		c.servers[id] = s
	}
	c.net = newNetwork(c.ids)
	for _, id := range c.ids {
		c.start(c.servers[id], machine{}, false)
	}
	return c
}

// Run performs one randomized run: faults for opts.Duration, then heal and
// require convergence within opts.Settle.
func Run(opts Options) (Stats, error) {
	c := NewCluster(opts)
	c.faultsOn = true
	c.RunFor(opts.Duration)
	c.faultsOn = false
	if c.err == nil {
		c.Settle()
	}
	c.Stats.Committed = len(c.chk.order)
	c.Stats.Delivered = c.net.delivered
	c.Stats.Dropped = c.net.dropped
	c.Stats.Leaders = len(c.chk.leaders)
	return c.Stats, c.Err()
}

// Err returns the first failure of the run, if any.
func (c *Cluster) Err() error {
	if c.err == nil {
		return nil
	}
	return &Failure{Options: c.opts, Time: c.now, Err: c.err, Trace: c.tr.lines()}
}

func (c *Cluster) fail(err error) {
	if c.err == nil {
		c.err = err
		c.note(0, "FAILURE: "+err.Error())
	}
}

func (c *Cluster) note(id uint64, text string) {
	c.tr.add(event{t: c.now, id: id, text: text})
}

func (c *Cluster) chance(p float64) bool { return c.rng.Float64() < p }

// start (re)creates a server's zab node from its disk.
func (c *Cluster) start(s *server, m machine, recovering bool) {
	zn, err := zab.NewNode(zab.Config{
		ID:            s.id,
		Voters:        c.voters,
		Observers:     c.ids[len(c.voters):],
		Storage:       s.disk.live,
		Applied:       m.zxid,
		Recovering:    recovering,
		MaxCounter:    c.opts.MaxCounter,
		MaxBatchBytes: c.opts.MaxBatchBytes,
		Rand:          rand.New(rand.NewPCG(c.rng.Uint64(), s.id)),
		// As the server: no peer acknowledgements in diskless mode
		// (server/replica.go).
		DisablePeerAcks: c.opts.Mode == ModeDiskless,
	})
	if err != nil {
		c.fail(fmt.Errorf("server %d: NewNode: %w", s.id, err))
		return
	}
	s.zn = zn
	s.m = m
	s.up = true
	s.paused = 0
	s.syncAt = 0
	s.soft = zab.SoftState{}
	if err := c.chk.restored(s.id, m); err != nil {
		c.fail(err)
	}
	c.process(s)
}

// RunFor advances the simulation by d time units (stopping at a failure).
func (c *Cluster) RunFor(d int64) {
	end := c.now + d
	for c.now < end && c.err == nil {
		c.step()
	}
}

// RunUntil advances until cond holds, at most d time units; it reports
// whether cond held.
func (c *Cluster) RunUntil(d int64, cond func() bool) bool {
	end := c.now + d
	for c.now < end && c.err == nil {
		if cond() {
			return true
		}
		c.step()
	}
	return c.err == nil && cond()
}

func (c *Cluster) step() {
	c.now++
	for _, id := range c.ids {
		if s := c.servers[id]; !s.up && s.restartAt != 0 && c.now >= s.restartAt {
			c.restart(s)
		}
	}
	for c.err == nil {
		m, ok := c.net.next(c.now, c.canReceive, c.ids)
		if !ok {
			break
		}
		c.deliver(m)
	}
	for _, id := range c.ids {
		s := c.servers[id]
		if c.err == nil && s.up && s.syncAt != 0 && c.now >= s.syncAt && c.now >= s.paused {
			s.syncAt = 0
			z := s.disk.fsync()
			s.zn.Persisted(z)
			// Half the time, send what Persisted caused at once, as the
			// server's log goroutine does (zab.Node.TakeMessages).
			if c.chance(0.5) {
				for _, m := range s.zn.TakeMessages() {
					c.net.send(m, c.now, 1+c.rng.Int64N(c.opts.MaxDelay))
				}
			}
			c.process(s)
		}
	}
	for _, id := range c.ids {
		s := c.servers[id]
		if c.err == nil && s.up && c.now >= s.paused && c.now >= s.nextTick {
			s.nextTick = c.now + s.period
			s.zn.Tick()
			c.process(s)
		}
	}
	if c.err != nil {
		return
	}
	if c.faultsOn {
		if c.chance(c.opts.ProposeRate) {
			c.proposeRandom()
		}
		c.faults()
	}
	c.housekeeping()
}

func (c *Cluster) canReceive(id uint64) bool {
	s := c.servers[id]
	return s.up && c.now >= s.paused
}

func (c *Cluster) deliver(m zab.Message) {
	c.tr.add(event{t: c.now, m: m, msg: true})
	s := c.servers[m.To]
	if m.Type == zab.MsgSync && int(m.Sync) < len(c.Stats.Syncs) {
		c.Stats.Syncs[m.Sync]++
	}
	if err := s.zn.Step(m); err != nil {
		c.fail(fmt.Errorf("server %d: Step(%v): %w", s.id, m, err))
		return
	}
	c.process(s)
}

// process is the driver loop of a server: it does what each Ready asks, in
// the order zab.Ready documents, and checks the invariants.
func (c *Cluster) process(s *server) {
	for c.err == nil && s.up && s.zn.HasReady() {
		rd := s.zn.Ready()
		if rd.SoftState != nil {
			prev := s.soft
			s.soft = *rd.SoftState
			c.note(s.id, fmt.Sprintf("%v %v leader=%d epoch=%d recovering=%v",
				s.soft.State, s.soft.Phase, s.soft.Leader, s.soft.Epoch, s.soft.Recovering))
			if err := c.chk.soft(s.id, s.soft); err != nil {
				c.fail(err)
				return
			}
			if s.soft.Epoch > c.Stats.MaxEpoch && s.soft.Established() {
				c.Stats.MaxEpoch = s.soft.Epoch
			}
			// Diskless: entering election is a checkpoint; write a
			// complete snapshot before taking part. Not while recovering:
			// a fuzzy state is not complete, and marking it so would let
			// the server restart as a voter that lacks acknowledged
			// writes (server/replica.go checkpoint).
			if c.opts.Mode == ModeDiskless && s.soft.State == zab.StateLooking && prev.State != zab.StateLooking && !s.soft.Recovering {
				s.disk.checkpoint(s.m)
			}
		}
		if rd.Snapshot != nil {
			s.disk.installSnapshot(*rd.Snapshot)
			s.m = decodeMachine(rd.Snapshot.Data)
			if s.m.zxid != rd.Snapshot.Zxid {
				c.fail(fmt.Errorf("server %d: snapshot data at %v for zxid %v", s.id, s.m.zxid, rd.Snapshot.Zxid))
				return
			}
			if err := c.chk.restored(s.id, s.m); err != nil {
				c.fail(err)
				return
			}
		}
		if rd.Truncate != nil {
			if err := s.disk.truncate(*rd.Truncate); err != nil {
				c.fail(fmt.Errorf("server %d: truncate %v: %w", s.id, *rd.Truncate, err))
				return
			}
		}
		if len(rd.Entries) > 0 {
			if err := c.chk.appended(s.id, rd.Entries); err != nil {
				c.fail(err)
				return
			}
			if err := s.disk.append(rd.Entries); err != nil {
				c.fail(fmt.Errorf("server %d: %w", s.id, err))
				return
			}
			if c.opts.Mode == ModeSync && s.syncAt == 0 {
				s.syncAt = c.now + 1 + c.rng.Int64N(c.opts.MaxSyncDelay)
			}
		}
		if rd.HardState != nil {
			if err := c.chk.hardState(s.id, *rd.HardState); err != nil {
				c.fail(err)
				return
			}
			s.disk.setHardState(*rd.HardState)
		}
		for _, m := range rd.Messages {
			c.net.send(m, c.now, 1+c.rng.Int64N(c.opts.MaxDelay))
		}
		for _, e := range rd.Committed {
			s.m.apply(e)
			isNew, err := c.chk.applied(s.id, e, s.m)
			if err != nil {
				c.fail(err)
				return
			}
			if isNew {
				c.note(s.id, "commit "+e.Zxid.String())
				if c.opts.Mode == ModeSync {
					if err := c.checkDurable(e.Zxid); err != nil {
						c.fail(err)
						return
					}
				}
			}
			if c.marker != nil && bytes.Equal(e.Data, c.marker) {
				c.markerApplied = true
			}
		}
		s.zn.Advance(rd)
		if c.opts.Mode == ModeDiskless && len(rd.Entries) > 0 {
			// Diskless: a proposal is "durable" once in memory.
			s.zn.Persisted(rd.Entries[len(rd.Entries)-1].Zxid)
		}
	}
}

// checkDurable: a committed entry must be on the disks of a quorum.
func (c *Cluster) checkDurable(z zab.Zxid) error {
	n := 0
	for _, id := range c.voters {
		if c.servers[id].disk.durable(z) {
			n++
		}
	}
	if n < len(c.voters)/2+1 {
		return fmt.Errorf("%v committed while durable on %d of %d voters", z, n, len(c.voters))
	}
	return nil
}

// Leader returns an up server that is an established leader (the one of
// the highest epoch if stale ones still believe they are), or 0.
func (c *Cluster) Leader() uint64 {
	var best uint64
	var epoch uint32
	for _, id := range c.ids {
		s := c.servers[id]
		if s.up && s.soft.Established() && (best == 0 || s.soft.Epoch > epoch) {
			best, epoch = id, s.soft.Epoch
		}
	}
	return best
}

// Propose proposes data at the current leader; it reports the zxid or an
// error (no leader, or the leader refused).
func (c *Cluster) Propose(data []byte) (zab.Zxid, error) {
	l := c.Leader()
	if l == 0 {
		return 0, zab.ErrNotLeader
	}
	return c.proposeAt(c.servers[l], data)
}

func (c *Cluster) proposeAt(s *server, data []byte) (zab.Zxid, error) {
	z, err := s.zn.Propose(data)
	if err != nil {
		return 0, err
	}
	c.proposed++
	c.Stats.Proposed++
	c.note(s.id, "propose "+z.String())
	c.process(s)
	return z, nil
}

func (c *Cluster) proposeRandom() {
	var cands []*server
	for _, id := range c.ids {
		s := c.servers[id]
		if s.up && c.now >= s.paused && s.soft.Established() {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return
	}
	s := cands[c.rng.IntN(len(cands))]
	data := strconv.AppendUint([]byte("w"), c.opts.Seed, 36)
	data = append(data, '.')
	data = strconv.AppendInt(data, int64(c.proposed), 10)
	if _, err := c.proposeAt(s, data); err != nil && !errors.Is(err, zab.ErrNotLeader) && !errors.Is(err, zab.ErrEpochExhausted) {
		c.fail(fmt.Errorf("server %d: Propose: %w", s.id, err))
	}
}

// housekeeping takes snapshots (compaction) and, in diskless mode, busy
// snapshots.
func (c *Cluster) housekeeping() {
	if c.opts.Compact && c.chance(0.02) {
		s := c.servers[c.ids[c.rng.IntN(len(c.ids))]]
		if snap, _ := s.disk.live.Snapshot(); s.up && s.m.zxid > snap.Zxid {
			if err := s.disk.compact(s.m); err != nil {
				c.fail(fmt.Errorf("server %d: compact at %v: %w", s.id, s.m.zxid, err))
				return
			}
			c.note(s.id, "compact at "+s.m.zxid.String())
		}
	}
	if c.opts.Mode == ModeDiskless && !c.opts.NoBusySnapshots && c.chance(0.02) {
		s := c.servers[c.ids[c.rng.IntN(len(c.ids))]]
		if s.up && s.disk.dirty {
			s.disk.busySnapshot(s.m)
		}
	}
}
