package kvserver

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
)

func TestHeatMessage(t *testing.T) {
	in := kv.Temperature{Heat: 1.25, Pending: true, NearStall: true, L0Sublevels: 7, Compacting: 2, CompactionDebt: 1 << 40}
	out, err := decodeHeat(encodeHeat(in))
	if err != nil {
		t.Fatal(err)
	}
	if out.Heat != in.Heat || !out.Pending || out.Held || !out.NearStall || out.L0Sublevels != 7 || out.Compacting != 2 || out.CompactionDebt != 1<<40 {
		t.Fatalf("round trip: %+v, want %+v", out, in)
	}
	good := encodeHeat(in)
	bad := [][]byte{
		nil,
		good[:10],
		good[:len(good)-1],
		append(append([]byte{}, good...), 0),
		append([]byte{'X'}, good[1:]...),
		append([]byte{'T', 2}, good[2:]...),
	}
	flags := append([]byte{}, good...)
	flags[10] |= 0x80
	bad = append(bad, flags)
	nan := encodeHeat(kv.Temperature{Heat: math.NaN()})
	neg := encodeHeat(kv.Temperature{Heat: -1})
	// A non-canonical varint: 0 written in two bytes.
	long := append(encodeHeat(kv.Temperature{})[:11], 0x80, 0x00, 0, 0)
	bad = append(bad, nan, neg, long)
	for i, b := range bad {
		if _, err := decodeHeat(b); err == nil {
			t.Errorf("case %d (%x): decoded", i, b)
		}
	}
}

func FuzzDecodeHeat(f *testing.F) {
	f.Add(encodeHeat(kv.Temperature{Heat: 0.5, L0Sublevels: 3, CompactionDebt: 99}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeat(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes.
		if got := encodeHeat(h); string(got) != string(b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, h, got)
		}
	})
}

// TestLeaderMovesBeforeCompacting: a 3-member group under write load,
// each member with small memtables so that flushes pile up L0 tables.
// The leader holds its compactions; once its heat passes the threshold
// with a compaction waiting, it hands leadership to a cooler member, and
// the leadership moves more than once. Every acknowledged put is on
// every member afterwards.
func TestLeaderMovesBeforeCompacting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member group under load")
	}
	for _, p := range []kv.LeaderPolicy{kv.PolicyCoolest, kv.PolicyRoundRobin} {
		t.Run(p.String(), func(t *testing.T) { testLeaderMoves(t, p) })
	}
}

func testLeaderMoves(t *testing.T, policy kv.LeaderPolicy) {
	logger := slog.New(slog.DiscardHandler)
	g, err := NewLocalGroup(3, t.TempDir(), replica.Sync, 100*time.Millisecond, logger)
	if err != nil {
		t.Fatal(err)
	}
	var (
		emu    sync.Mutex
		events []LeaderChangeEvent
	)
	ms := make([]*member, len(g.Configs))
	for i, c := range g.Configs {
		c.LeaderChange = kv.LeaderChangeConfig{Policy: policy, MinInterval: time.Second}
		c.MemTableSize = 64 << 10
		c.OnLeaderChange = func(e LeaderChangeEvent) {
			emu.Lock()
			events = append(events, e)
			emu.Unlock()
		}
		ms[i] = &member{cfg: c}
		ms[i].start(t)
	}
	defer func() {
		for _, m := range ms {
			if m.running() {
				m.stop(t)
			}
		}
	}()
	c, err := kvclient.New(kvclient.Config{Endpoints: g.Endpoints(), RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	transfers := func() (n int, leaders map[uint64]bool) {
		emu.Lock()
		defer emu.Unlock()
		leaders = make(map[uint64]bool)
		for _, e := range events {
			leaders[e.Member] = true
			if e.Decision.Action == kv.Transfer && e.Err == nil {
				n++
			}
		}
		return n, leaders
	}

	// Writers put 1 KiB rows (10 columns of 100 B, the paper's record)
	// until leadership has moved twice, each put bounded in count and
	// the whole load in time.
	const writers, perWriter = 4, 3000
	var (
		wg    sync.WaitGroup
		amu   sync.Mutex
		acked []string
		last  uint64
	)
	stop := make(chan struct{})
	deadline := time.Now().Add(60 * time.Second)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			val := make([]byte, 100)
			for i := 0; i < perWriter && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				row := fmt.Sprintf("w%d-%05d", w, i)
				var cells []*kvpb.Cell
				for q := 0; q < 10; q++ {
					copy(val, fmt.Sprintf("%s/%d", row, q))
					cells = append(cells, &kvpb.Cell{Family: "cf", Qualifier: []byte(fmt.Sprint(q)), Value: append([]byte(nil), val...)})
				}
				r, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte(row), Cells: cells})
				if err != nil {
					// Unknown outcome: not acknowledged, not checked.
					continue
				}
				amu.Lock()
				acked = append(acked, row)
				last = max(last, r.Version)
				amu.Unlock()
			}
		}()
	}
	// The verdict is the check below, with the events logged first.
	testutil.Within(time.Until(deadline), func() bool {
		n, leaders := transfers()
		return n >= 2 && len(leaders) >= 2
	})
	close(stop)
	wg.Wait()

	n, leaders := transfers()
	emu.Lock()
	for _, e := range events {
		t.Logf("member %d: %v to %d (%s), err %v; L0 %d sublevels, held %v, pending %v",
			e.Member, e.Decision.Action, e.Decision.To, e.Decision.Reason, e.Err, e.Temperature.L0Sublevels, e.Temperature.Held, e.Temperature.Pending)
		if e.Decision.Action == kv.Transfer {
			// The leader handed over with its compaction held and due.
			if tp := e.Temperature; !tp.Held || !tp.Pending || tp.Heat < 1 {
				t.Errorf("member %d handed over at %+v, want a held compaction waiting at heat >= 1", e.Member, tp)
			}
		}
	}
	emu.Unlock()
	if n < 2 || len(leaders) < 2 {
		t.Fatalf("%d transfers started, %d members acted as leader; want leadership moved twice", n, len(leaders))
	}
	t.Logf("%d puts acknowledged, %d transfers", len(acked), n)

	// Every member applies everything acknowledged and holds every
	// acknowledged row, whole.
	waitApplied(t, 30*time.Second, ms, zabZxid(last))
	for _, m := range ms {
		m.mu.Lock()
		s := m.store
		m.mu.Unlock()
		for _, row := range acked {
			cells, err := s.Get("t", []byte(row), kv.ReadOptions{})
			if err != nil || len(cells) != 10 {
				t.Fatalf("member %d, row %s: %d cells, %v", m.cfg.ID, row, len(cells), err)
			}
		}
		// Its compactions ran once it no longer led.
		if tp, err := s.Temperature(0); err != nil || tp.Compactions == 0 {
			t.Errorf("member %d: %+v, %v; want compactions run", m.cfg.ID, tp, err)
		}
	}
}

// TestHeatReportsFromPeersOnly: a member keeps the temperatures its
// group's members send and refuses a stranger's and malformed ones.
func TestHeatReportsFromPeersOnly(t *testing.T) {
	lc := &leaderChange{id: 1, peers: []uint64{2, 3}, log: slog.New(slog.DiscardHandler)}
	lc.onMessage(heatMessage(2, 1, kv.Temperature{Heat: 0.5}))
	lc.onMessage(heatMessage(9, 1, kv.Temperature{Heat: 0.1}))
	bad := heatMessage(3, 1, kv.Temperature{})
	bad.Entries[0].Data = bad.Entries[0].Data[:5]
	lc.onMessage(bad)
	t2, ok2 := lc.ch.Reported(2)
	_, ok3 := lc.ch.Reported(3)
	_, ok9 := lc.ch.Reported(9)
	if !ok2 || ok3 || ok9 || t2.Heat != 0.5 {
		t.Fatalf("reports of 2, 3, 9: %v (heat %v) %v %v; want member 2's only", ok2, t2.Heat, ok3, ok9)
	}
}
