package kvserver

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"slices"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

// DefaultMemTableSize and DefaultCacheSize are a member's pebble memtable
// and block cache when its Config leaves them 0 (pebble's own are 4 MiB
// and 8 MiB). Every put point-deletes the version it replaces, so the
// LSM sees two keys a cell written: with 4 MiB memtables a 100%-write
// load flushed a small L0 table every second or so and each L0
// compaction rewrote the whole base level, about half of every member's
// CPU; and the trim read the older versions from sstable blocks the
// 8 MiB cache could not hold. A larger memtable is not better without
// bound: every put seeks it once a column written, and in a 64 MiB
// skiplist those seeks miss the CPU caches (64 MiB cost more CPU per
// write than 16 MiB; docs/bench/notes/kv-write-path.md). Pebble grows a
// database's memtables from 256 KiB up to the size, so idle stores of a
// sharded node stay small.
const (
	DefaultMemTableSize = 16 << 20
	DefaultCacheSize    = 64 << 20
)

// staggeredMemTable is the default memtable size of member id: the
// members of a group apply the same entries, so with one size their
// memtables fill at the same zxid and all of them flush, then compact,
// at once, each on its own core budget. Sizes a quarter apart (1, 1.25,
// 1.5, 1.75 times DefaultMemTableSize) let the flushes drift apart, so
// that while one member compacts the others keep a quorum acknowledging.
func staggeredMemTable(id uint64) uint64 {
	return DefaultMemTableSize + DefaultMemTableSize/4*((id+3)%4)
}

// Config configures one member.
type Config struct {
	ID uint64
	// Peers are every voter's quorum and election addresses, this
	// member's included.
	Peers map[uint64]transport.Peer
	// APIAddrs are every member's API address, for NotLeader answers.
	APIAddrs map[uint64]string
	// APIListen is where this member serves the KV API ("" means
	// APIAddrs[ID]).
	APIListen string
	// Dir holds the member's data: kv/ (pebble), log/ (the zab log) and
	// the epoch files.
	Dir  string
	Mode replica.Mode
	// TickTime is ZooKeeper's tickTime (default 2 s); InitLimit and
	// SyncLimit are in ticks (defaults 10 and 5).
	TickTime             time.Duration
	InitLimit, SyncLimit int
	// SnapCount as zoo.cfg's snapCount (the driver's default when 0).
	SnapCount int
	Logger    *slog.Logger
	// QuorumListener, ElectionListener and APIListener, if set, are used
	// instead of listening (tests listen on port 0 first).
	QuorumListener, ElectionListener, APIListener net.Listener
	// OnStore, if set, is handed the member's store once it is open
	// (tests compare the members' states through it).
	OnStore func(*kv.Store)
	// OnRole, if set, is called (on the driver's loop; it must not block)
	// whenever this member becomes or stops being the established leader
	// or its epoch changes.
	OnRole func(zab.SoftState)
	// PreferredLeader, if set, is the member this one hands leadership to
	// when it wins a fresh group's first election (epoch 1), so that a
	// node hosting several groups does not lead them all. Later
	// elections keep their winner: moving leaders then is a balancer's
	// job.
	PreferredLeader uint64

	// LeaderChange configures the compaction-aware leader change; its
	// zero value is the fixed leader (compactions never held).
	LeaderChange kv.LeaderChangeConfig
	// MemTableSize is pebble's memtable size (when 0, DefaultMemTableSize
	// staggered by member id: staggeredMemTable), CacheSize its block
	// cache (DefaultCacheSize when 0).
	MemTableSize uint64
	CacheSize    int64
	// RowCacheSize is the store's row cache (kv.Options.RowCacheSize:
	// its default when 0, none when negative).
	RowCacheSize int64
	// OnLeaderChange, if set, learns each act of the leader change
	// (a transfer started, a turn to compacting in place).
	OnLeaderChange func(LeaderChangeEvent)

	// MetricsListen, if set, is where the member serves its Prometheus
	// metrics (MetricsPath; metrics.go), MetricsListener a listener
	// opened for it instead. MetricsRuntime adds the Go runtime's and
	// the process's collectors.
	MetricsListen   string
	MetricsListener net.Listener
	MetricsRuntime  bool
}

// subTicks is how many zab ticks make one tickTime (as the server's).
const subTicks = 10

// asyncSyncEvery is how often async mode fsyncs the log.
const asyncSyncEvery = time.Second

// leaderChangeEvery is how often a member reports its temperature and a
// leader decides about its compactions; leaderChangeMaxLag how many
// entries a transfer target's acknowledgements may trail the log's end.
const (
	leaderChangeEvery  = 100 * time.Millisecond
	leaderChangeMaxLag = 10000
)

// Run runs the member until ctx ends. ready, if set, is called with the
// API address once the member serves.
func Run(ctx context.Context, cfg Config, ready func(apiAddr string)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rep, err := openReplica(ctx, cfg, nil)
	if err != nil {
		return err
	}
	defer rep.close()
	mlis, reg, opts, err := openMetrics(cfg, rep)
	if err != nil {
		return err
	}
	lis, err := apiListener(cfg)
	if err != nil {
		if mlis != nil {
			mlis.Close()
		}
		return err
	}
	srv := apisrv.FromListener(lis, opts)
	kvpb.RegisterKVServer(srv.Registrar(), kv.NewService(rep.store, rep.group))

	parts := 2
	errc := make(chan error, 3)
	go func() { errc <- rep.run(ctx) }()
	go func() { errc <- srv.Serve(ctx) }()
	if mlis != nil {
		parts++
		go func() { errc <- serveMetrics(ctx, mlis, reg) }()
	}
	if ready != nil {
		ready(srv.Addr().String())
	}
	var first error
	for i := 0; i < parts; i++ {
		// One part failing stops the others.
		if err := <-errc; err != nil {
			if first == nil {
				first = err
			}
			cancel(err)
		}
	}
	return first
}

// apiListener is cfg's API listener, opened unless given.
func apiListener(cfg Config) (net.Listener, error) {
	if cfg.APIListener != nil {
		return cfg.APIListener, nil
	}
	addr := cfg.APIListen
	if addr == "" {
		addr = cfg.APIAddrs[cfg.ID]
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kvserver: API listener: %w", err)
	}
	return lis, nil
}

// replica is one member of one RG without its API: the store, the zab
// log, the transport to its peers, the driver and the compaction-aware
// leader change. openReplica opens it;
// run drives it until ctx ends; close releases what open took.
type replicaRun struct {
	cfg    Config
	store  *kv.Store
	wl     *wal.Log
	send   func([]zab.Message)
	recv   <-chan zab.Message
	d      *replica.Driver
	group  *Group
	lc     *leaderChange
	roles  *roleMetrics
	closer []func()
}

func (r *replicaRun) close() {
	for i := len(r.closer) - 1; i >= 0; i-- {
		r.closer[i]()
	}
}

// link is a replica's way to its peers when it shares its node's
// transport (mux): nil means the replica opens a TCP transport of its own
// on cfg's listeners.
type link struct {
	send func([]zab.Message)
	recv <-chan zab.Message
	// backlog reports the bytes queued for a peer (transport.TCP.Backlog),
	// which a streamed snapshot paces itself by; nil: no pacing.
	backlog func(uint64) int64
	// lost, if set, tells the driver of the transport's broken links.
	lost *lostLinks
}

// openReplica opens cfg's store, log and transport (unless given) and
// makes its driver. The transport stops with ctx. On error nothing stays
// open.
func openReplica(ctx context.Context, cfg Config, ln *link) (rep *replicaRun, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TickTime <= 0 {
		cfg.TickTime = 2 * time.Second
	}
	if cfg.InitLimit <= 0 {
		cfg.InitLimit = 10
	}
	if cfg.SyncLimit <= 0 {
		cfg.SyncLimit = 5
	}
	log := cfg.Logger
	rep = &replicaRun{cfg: cfg, roles: newRoleMetrics()}
	defer func() {
		if err != nil {
			rep.close()
		}
	}()

	fsys := vfs.OS()
	if err := fsys.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	memTable, cache := cfg.MemTableSize, cfg.CacheSize
	if memTable == 0 {
		memTable = staggeredMemTable(cfg.ID)
	}
	if cache == 0 {
		cache = DefaultCacheSize
	}
	store, err := kv.Open(kv.Options{Dir: filepath.Join(cfg.Dir, "kv"), Logger: log,
		MemTableSize: memTable, CacheSize: cache, RowCacheSize: cfg.RowCacheSize, GateCompactions: cfg.LeaderChange.Policy != kv.PolicyFixed})
	if err != nil {
		return nil, err
	}
	rep.store = store
	rep.closer = append(rep.closer, func() { store.Close() })
	if cfg.OnStore != nil {
		cfg.OnStore(store)
	}
	diskless := cfg.Mode == replica.Diskless
	var (
		ents     []zab.Entry
		complete bool
		env      replica.Env
	)
	ckpt := &checkpointFile{log: log, fs: fsys, dir: cfg.Dir, store: store}
	if diskless {
		// No log: the entries a complete checkpoint saved beside the
		// flushed store, or none (then a member that took part in an
		// epoch restarts recovering).
		if ents, complete, err = ckpt.load(store.Applied()); err != nil {
			return nil, err
		}
		env.Checkpoints = ckpt
	} else {
		wl, err := wal.Open(fsys, filepath.Join(cfg.Dir, "log"), wal.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("kvserver: opening the log: %w", err)
		}
		rep.wl = wl
		rep.closer = append(rep.closer, func() { wl.Close() })
		if ents, err = readLog(wl, store.Applied()); err != nil {
			return nil, fmt.Errorf("kvserver: reading the log: %w", err)
		}
		env.Log = walLog{l: wl, async: cfg.Mode == replica.Async}
	}
	epochs := &epochFiles{fs: fsys, dir: cfg.Dir}
	hs, err := epochs.load()
	if err != nil {
		return nil, fmt.Errorf("kvserver: reading the epochs: %w", err)
	}

	if ln == nil {
		lost := &lostLinks{}
		tcfg := transport.TCPConfig{ID: cfg.ID, Peers: cfg.Peers, QuorumListener: cfg.QuorumListener, ElectionListener: cfg.ElectionListener,
			OnDisconnect: lost.report, Logger: log}
		tr, err := transport.NewTCP(ctx, tcfg)
		if err != nil {
			return nil, err
		}
		rep.closer = append(rep.closer, func() { tr.Close() })
		ln = &link{send: tr.Send, recv: tr.Recv(), lost: lost, backlog: tr.Backlog}
	}
	rep.send, rep.recv = ln.send, ln.recv

	aw, cn := &appliedWaiters{}, newNotifier()
	voters := make([]uint64, 0, len(cfg.Peers))
	for id := range cfg.Peers {
		voters = append(voters, id)
	}
	slices.Sort(voters)
	wl := rep.wl
	lc := &leaderChange{
		cfg: cfg.LeaderChange, id: cfg.ID, store: store, send: ln.send, log: log,
		rand:  rand.New(rand.NewPCG(cfg.ID, uint64(time.Now().UnixNano()))),
		every: leaderChangeEvery,
		ch: kv.LeaderChanger{
			Config: cfg.LeaderChange, ID: cfg.ID,
			StaleAfter: 10 * leaderChangeEvery, MaxLastHeard: subTicks, MaxLag: leaderChangeMaxLag,
		},
		onEvent: func(e LeaderChangeEvent) {
			rep.roles.noteEvent(e)
			if cfg.OnLeaderChange != nil {
				cfg.OnLeaderChange(e)
			}
		},
	}
	for _, id := range voters {
		if id != cfg.ID {
			lc.peers = append(lc.peers, id)
		}
	}
	// SNAPs stream their checkpoint ahead of them (snapstream.go).
	sender := snapstream.NewSender(ctx, snapstream.SenderConfig{
		ID: cfg.ID, Send: ln.send, Backlog: ln.backlog,
		Piece:         func(to, id, seq uint64, b []byte) zab.Message { return snapstream.PieceMessage(cfg.ID, to, id, seq, b) },
		Produce:       snapstream.FromWriteSnapshot(store.WriteSnapshot, streamPiece),
		ProgressEvery: cfg.TickTime / 2,
		Logger:        log,
	})
	rep.closer = append(rep.closer, sender.Wait)
	in := &snapstream.Learner{ID: cfg.ID, Send: ln.send, FS: fsys, Path: filepath.Join(cfg.Dir, "snap.spool"),
		ProgressEvery: cfg.TickTime / 2, Logger: log}
	d, err := replica.New(replica.Config{
		ID: cfg.ID, Voters: voters, Mode: cfg.Mode,
		SM:        notifyingSM{Store: store, w: aw, in: in},
		HardState: hs,
		Log:       ents,
		Complete:  complete,
		Env: replica.Env{
			Log:         env.Log,
			Checkpoints: env.Checkpoints,
			HardState:   epochs,
			Send:        func(msgs []zab.Message) { ln.send(sender.Route(msgs)) },
			Clock:       replica.SystemClock{},
			SnapshotImage: func(zab.Zxid) ([]byte, error) {
				return snapstream.Header(nil), nil
			},
		},
		ElectionTick:  2,
		HeartbeatTick: subTicks / 2,
		InitLimit:     cfg.InitLimit * subTicks,
		SyncLimit:     cfg.SyncLimit * subTicks,
		Schedule:      replica.Schedule{SnapCount: cfg.SnapCount},
		OnSoftState: func(prev, cur zabSoftState) {
			aw.wakeAll()
			cn.broadcast()
			rep.roles.noteRole(prev, cur)
			if prev.Leader != cur.Leader || prev.State != cur.State {
				log.Info("kv member role", "state", cur.State, "leader", cur.Leader, "epoch", cur.Epoch)
			}
			if cfg.OnRole != nil && (prev.Established() != cur.Established() || prev.Epoch != cur.Epoch) {
				cfg.OnRole(cur)
			}
			if !prev.Established() && cur.Established() && cur.Epoch == 1 && cfg.PreferredLeader != 0 && cfg.PreferredLeader != cfg.ID {
				rep.handOver(ctx, cur.Epoch)
			}
		},
		OnSnapshot: func(z zabZxid, busy bool) {
			if wl == nil {
				return // diskless: no log on disk
			}
			// The log is needed from the store's flushed zxid on.
			cut := min(z, store.Durable())
			if err := wl.PurgeBefore(int64(cut)); err != nil {
				log.Warn("kv: purging the log", "err", err)
			}
		},
		OnDriverMessage: lc.onMessage,
		Intercept:       in.Intercept,
		OnConfirmed:     func(uint64) { cn.broadcast() },
		Logger:          log,
	})
	if err != nil {
		return nil, err
	}
	rep.d = d
	lc.d = d
	if ln.lost != nil {
		ln.lost.add(d.ReportUnreachable)
	}
	rep.lc = lc
	rep.group = &Group{ctx: ctx, d: d, store: store, applied: aw, apiAddrs: cfg.APIAddrs, confirmed: cn,
		roundTimeout: time.Duration(cfg.SyncLimit) * cfg.TickTime}
	return rep, nil
}

// handOver asks the driver, off its loop, to transfer leadership to the
// preferred member once the followers have had a few ticks to join.
func (r *replicaRun) handOver(ctx context.Context, epoch uint32) {
	go func() {
		t := time.NewTimer(4 * r.cfg.TickTime)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ss := r.d.SoftState(); ss.Established() && ss.Epoch == epoch {
			if err := r.d.TransferLeadership(r.cfg.PreferredLeader); err != nil {
				r.cfg.Logger.Info("kv: leadership not handed over", "to", r.cfg.PreferredLeader, "err", err)
			} else {
				r.roles.transfers.WithLabelValues(transferPreferred).Inc()
			}
		}
	}()
}

// run drives the replica until ctx ends or a part fails.
func (r *replicaRun) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errc := make(chan error, 3)
	// The driver takes an orderly stop (and writes diskless mode's
	// checkpoint) only when its context's cause is context.Canceled, not
	// a signal's cause (signal.NotifyContext) or a sibling's error.
	driverCtx, stopDriver := context.WithCancel(context.WithoutCancel(ctx))
	defer stopDriver()
	stopAfter := context.AfterFunc(ctx, stopDriver)
	defer stopAfter()
	go func() { errc <- r.d.Run(driverCtx, r.recv, r.cfg.TickTime/subTicks) }()
	go func() { r.lc.run(ctx); errc <- nil }()
	if r.cfg.Mode == replica.Async {
		go func() {
			t := time.NewTicker(asyncSyncEvery)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					errc <- nil
					return
				case <-t.C:
					if err := r.wl.Sync(); err != nil {
						errc <- fmt.Errorf("kvserver: periodic log sync: %w", err)
						return
					}
				}
			}
		}()
	} else {
		errc <- nil
	}
	var first error
	for i := 0; i < 3; i++ {
		// One part failing stops the others.
		if err := <-errc; err != nil {
			if first == nil {
				first = err
			}
			cancel(err)
		}
	}
	return first
}
