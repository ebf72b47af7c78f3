package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/rlog/rlogclient"
)

var flagProcs = flag.Bool("rlog.procs", false, "run TestLogGroupProcesses (three server processes, SIGKILLs)")

type memberProc struct {
	cmd *exec.Cmd
	api string
}

// startMember starts `corral log serve-member` and waits for its api line.
func startMember(t *testing.T, bin string, id int, peers, dir, api string) *memberProc {
	t.Helper()
	cmd := exec.Command(bin, "log", "serve-member", "-id", fmt.Sprint(id), "-peers", peers,
		"-dir", dir, "-listen", api, "-snapcount", "40")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("member %d: %v", id, err)
	}
	got, _ := strings.CutPrefix(strings.TrimSpace(line), "api endpoints: ")
	return &memberProc{cmd: cmd, api: got}
}

// waitLimit bounds a wait for a condition; it only turns a hang into a failure.
const waitLimit = 30 * time.Second

func (m *memberProc) kill() {
	m.cmd.Process.Signal(syscall.SIGKILL)
	m.cmd.Wait()
}

// leaderOf returns the index of the member that takes writes: a trim to
// 0 changes nothing and only the leader answers it.
func leaderOf(ctx context.Context, t *testing.T, apis []string, name string) int {
	t.Helper()
	at := -1
	testutil.Eventually(t, waitLimit, "a member takes writes", func() bool {
		for i, a := range apis {
			c, err := rlogclient.Dial([]string{a})
			if err != nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err = c.Trim(cctx, name, 0)
			cancel()
			c.Close()
			if err == nil {
				at = i
				return true
			}
		}
		return false
	})
	return at
}

// TestLogGroupProcesses runs three `corral log serve-member` processes.
// Three writers append 64 KiB payloads while the leader and then a
// follower are SIGKILLed and restarted, and a member restarted from an
// empty disk catches up; afterwards every acknowledged append is present
// with identical bytes on every member, and the members' logs are equal.
func TestLogGroupProcesses(t *testing.T) {
	if !*flagProcs {
		t.Skip("runs three server processes for ~20 s; enable with -rlog.procs")
	}
	bin := buildCorral(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ports := make([]int, 9)
	for i := range ports {
		ports[i] = testutil.FreePort(t)
	}
	var peerList []string
	for i := range 3 {
		peerList = append(peerList, fmt.Sprintf("%d=127.0.0.1:%d:%d", i+1, ports[i*3], ports[i*3+1]))
	}
	peers := strings.Join(peerList, ",")
	dirs := make([]string, 3)
	apis := make([]string, 3)
	ms := make([]*memberProc, 3)
	for i := range 3 {
		dirs[i] = t.TempDir()
		apis[i] = fmt.Sprintf("127.0.0.1:%d", ports[i*3+2])
		ms[i] = startMember(t, bin, i+1, peers, dirs[i], apis[i])
	}
	defer func() {
		for _, m := range ms {
			m.kill()
		}
	}()
	c, err := rlogclient.Dial(apis)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testutil.EventuallyNoError(t, waitLimit, "create g", func() error {
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		defer ccancel()
		_, err := c.Create(cctx, "g")
		return err
	})

	type ack struct {
		off  int64
		data []byte
	}
	var mu sync.Mutex
	var acks []ack
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 300; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := make([]byte, 64<<10)
				for j := range p {
					p[j] = byte(r.IntN(256))
				}
				actx, acancel := context.WithTimeout(ctx, 3*time.Second)
				off, err := c.Append(actx, "g", p, nil)
				acancel()
				if err != nil {
					time.Sleep(50 * time.Millisecond) // outcome unknown: not acknowledged
					continue
				}
				mu.Lock()
				acks = append(acks, ack{off, p})
				mu.Unlock()
			}
		}()
	}
	waitAcks := func(n int) {
		testutil.Eventually(t, waitLimit, fmt.Sprintf("%d appends acknowledged", n), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acks) >= n
		})
	}
	// caughtUp waits until every member has committed what the leader
	// had when it was called: a 3-member group survives one failure at a
	// time, so each kill waits for the previous victim to catch up.
	caughtUp := func() {
		lc, _ := rlogclient.Dial([]string{apis[leaderOf(ctx, t, apis, "g")]})
		st, err := lc.Stat(ctx, "g")
		lc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range apis {
			mc, _ := rlogclient.Dial([]string{a})
			testutil.EventuallyNoError(t, waitLimit, fmt.Sprintf("member %d catches up to %d", i+1, st.End), func() error {
				s, err := mc.Stat(ctx, "g")
				if err == nil && s.Committed < st.End {
					err = fmt.Errorf("committed %d", s.Committed)
				}
				return err
			})
			mc.Close()
		}
	}
	waitAcks(30)
	l := leaderOf(ctx, t, apis, "g")
	t.Logf("killing leader %d", l+1)
	ms[l].kill()
	waitAcks(60)
	ms[l] = startMember(t, bin, l+1, peers, dirs[l], apis[l])
	caughtUp()
	f := (leaderOf(ctx, t, apis, "g") + 1) % 3
	t.Logf("killing follower %d", f+1)
	ms[f].kill()
	waitAcks(90)
	ms[f] = startMember(t, bin, f+1, peers, dirs[f], apis[f])
	caughtUp()
	// A member from an empty disk (the others snapshot every ~40 records
	// and cut their logs, so it needs a SNAP with the payloads).
	e := (f + 1) % 3
	t.Logf("killing %d, restarting it empty", e+1)
	ms[e].kill()
	os.RemoveAll(dirs[e])
	waitAcks(120)
	ms[e] = startMember(t, bin, e+1, peers, dirs[e], apis[e])
	waitAcks(130)
	close(stop)
	wg.Wait()

	// Every member: committed up to the leader's end, every ack's bytes.
	lc, _ := rlogclient.Dial([]string{apis[leaderOf(ctx, t, apis, "g")]})
	st, err := lc.Stat(ctx, "g")
	lc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sums [3][32]byte
	var alls [3][]byte
	for i, a := range apis {
		mc, _ := rlogclient.Dial([]string{a})
		testutil.EventuallyNoError(t, waitLimit, fmt.Sprintf("member %d committed to %d", i+1, st.End), func() error {
			s, err := mc.Stat(ctx, "g")
			if err == nil && s.Committed < st.End {
				err = fmt.Errorf("committed %d", s.Committed)
			}
			return err
		})
		var all []byte
		for off := int64(0); off < st.End; {
			b, next, _, err := mc.Read(ctx, "g", off, 1<<20, 0)
			if err != nil {
				t.Fatalf("member %d: read at %d: %v", i+1, off, err)
			}
			all = append(all, b...)
			off = next
		}
		mc.Close()
		alls[i] = all
		sums[i] = sha256.Sum256(all)
	}
	for i := range alls {
		for _, a := range acks {
			if !bytes.Equal(alls[i][a.off:a.off+int64(len(a.data))], a.data) {
				var others []string
				for j := range alls {
					others = append(others, fmt.Sprintf("member %d equal: %v", j+1, bytes.Equal(alls[j][a.off:a.off+int64(len(a.data))], a.data)))
				}
				t.Fatalf("member %d: acknowledged append at %d (of %d acks, end %d) differs; %v", i+1, a.off, len(acks), st.End, others)
			}
		}
	}
	if sums[0] != sums[1] || sums[1] != sums[2] {
		t.Fatalf("members' logs differ: %x %x %x", sums[0][:8], sums[1][:8], sums[2][:8])
	}
	t.Logf("%d appends acknowledged, %d bytes, every member equal", len(acks), st.End)
}
