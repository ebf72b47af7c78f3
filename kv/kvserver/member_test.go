package kvserver

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/zab"
)

// member is one running member of a test group.
type member struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	store  *kv.Store
}

func (m *member) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan error, 1)
	cfg := m.cfg
	cfg.OnStore = func(s *kv.Store) { m.mu.Lock(); m.store = s; m.mu.Unlock() }
	go func() { m.done <- Run(ctx, cfg, nil) }()
	// A restart listens on the same addresses itself.
	m.cfg.QuorumListener, m.cfg.ElectionListener, m.cfg.APIListener = nil, nil, nil
}

func (m *member) stop(t *testing.T) {
	m.cancel()
	if err := <-m.done; err != nil {
		t.Errorf("member %d: %v", m.cfg.ID, err)
	}
	m.mu.Lock()
	m.store = nil
	m.mu.Unlock()
}

func (m *member) running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.store != nil
}

func (m *member) applied() zabZxid {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil {
		return 0
	}
	return m.store.Applied()
}

// waitApplied waits until every member has applied zxid.
func waitApplied(t *testing.T, limit time.Duration, ms []*member, zxid zab.Zxid) {
	t.Helper()
	for _, m := range ms {
		testutil.Eventually(t, limit, fmt.Sprintf("member %d applied %x", m.cfg.ID, zxid), func() bool {
			return m.applied() >= zxid
		})
	}
}

// leader asks each member directly which of them leads.
func leader(t *testing.T, ms []*member) int {
	t.Helper()
	at := -1
	testutil.Eventually(t, 20*time.Second, "a member answers as leader", func() bool {
		for i, m := range ms {
			if !m.running() {
				continue
			}
			cc, err := grpc.NewClient(m.cfg.APIAddrs[m.cfg.ID], grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = kvpb.NewKVClient(cc).ListTables(ctx, &kvpb.ListTablesRequest{})
			cancel()
			cc.Close()
			if err == nil {
				at = i
				return true
			}
		}
		return false
	})
	return at
}

// TestGroupSurvivesLeaderStop: a 3-member group keeps every acknowledged
// put through its leader's stop and restart, and all members converge on
// the same rows.
func TestGroupSurvivesLeaderStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member group")
	}
	for _, mode := range []replica.Mode{replica.Sync, replica.Diskless} {
		t.Run(mode.String(), func(t *testing.T) { testGroupSurvivesLeaderStop(t, mode) })
	}
}

// testLogWriter sends a member's log to t.Log, which prints it only if
// the test fails.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testGroupSurvivesLeaderStop(t *testing.T, mode replica.Mode) {
	logger := slog.New(slog.NewTextHandler(testLogWriter{t}, nil))
	g, err := NewLocalGroup(3, t.TempDir(), mode, 100*time.Millisecond, logger)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*member, len(g.Configs))
	for i, c := range g.Configs {
		ms[i] = &member{cfg: c}
		ms[i].start(t)
	}
	defer func() {
		for _, m := range ms {
			if m.running() {
				m.stop(t)
				continue
			}
			// A member whose Run ended by itself (a listener it could
			// not bind at a restart) says why.
			select {
			case err := <-m.done:
				if err != nil {
					t.Errorf("member %d ended: %v", m.cfg.ID, err)
				}
			default:
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
	var last uint64
	put := func(i int) {
		t.Helper()
		r, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte(fmt.Sprintf("r%03d", i)), Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte(fmt.Sprint(i))}}})
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		last = max(last, r.Version)
	}
	for i := 0; i < 20; i++ {
		put(i)
	}
	old := leader(t, ms)
	ms[old].stop(t)
	for i := 20; i < 40; i++ {
		put(i)
	}
	sc, err := c.Scan(ctx, &kvpb.ScanRequest{Table: "t"})
	if err != nil || len(sc.Rows) != 40 {
		t.Fatalf("scan after the leader stopped: %d rows, %v", len(sc.Rows), err)
	}
	ms[old].start(t)
	put(40)
	// Every member applies everything, the restarted one by DIFF.
	waitApplied(t, 20*time.Second, ms, zabZxid(last))
	// Concurrent reads share confirmation rounds and each sees its row.
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := fmt.Sprintf("r%03d", i)
			r, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte(row)})
			if err == nil && string(r.Cells[0].Value) != fmt.Sprint(i) {
				err = fmt.Errorf("%s holds %q", row, r.Cells[0].Value)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var want string
	for i, m := range ms {
		m.mu.Lock()
		rows, err := m.store.Scan("t", nil, nil, 0, kv.ReadOptions{})
		m.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(rows)
		if len(rows) != 41 {
			t.Fatalf("member %d holds %d rows", m.cfg.ID, len(rows))
		}
		if i == 0 {
			want = got
		} else if got != want {
			t.Fatalf("member %d differs from member 1", m.cfg.ID)
		}
	}
	// An orderly stop of every member loses nothing, diskless included
	// (each writes a complete checkpoint on the way out).
	for _, m := range ms {
		m.stop(t)
	}
	for _, m := range ms {
		m.start(t)
	}
	sc, err = c.Scan(ctx, &kvpb.ScanRequest{Table: "t"})
	if err != nil {
		t.Fatalf("scan after stopping and restarting every member: %v", err)
	}
	if len(sc.Rows) != 41 {
		t.Fatalf("scan after stopping and restarting every member: %d rows, want 41", len(sc.Rows))
	}
}
