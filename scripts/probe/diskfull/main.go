// Command diskfull loads and checks what scripts/probe/disk-full.sh
// needs: znodes /df/kNNNNNNNN of a derived payload through go-zookeeper,
// the acknowledged ones listed in a file, then checked on one member.
//
//	diskfull load -servers H:P,... -dur D [-idle D] [-size B] [-c C] [-base I] -acked FILE
//	diskfull check -server H:P -acked FILE [-size B]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/bench/load"
)

func body(i, size int) []byte { return load.ValueFrom(uint32(i*2654435761+1)|1, size) }

func path(i int) string { return fmt.Sprintf("/df/k%08d", i) }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: diskfull load|check [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	servers := fs.String("servers", "", "host:port,...")
	server := fs.String("server", "", "host:port")
	dur := fs.Duration("dur", 30*time.Second, "how long to load")
	size := fs.Int("size", 1024, "bytes a znode")
	conc := fs.Int("c", 16, "in flight")
	acked := fs.String("acked", "", "file of acknowledged indices")
	base := fs.Int("base", 0, "first index is base+1 (load)")
	idle := fs.Duration("idle", 5*time.Second, "stop loading after this long without an acknowledged write")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "load":
		err = run(strings.Split(*servers, ","), *dur, *idle, *size, *conc, *acked, *base)
	case "check":
		err = check(*server, *acked, *size)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "diskfull:", err)
		os.Exit(1)
	}
}

func connect(servers []string) (*zk.Conn, error) {
	c, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogInfo(false))
	return c, err
}

func run(servers []string, dur, idle time.Duration, size, conc int, ackedPath string, base int) error {
	c, err := connect(servers)
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := os.Create(ackedPath)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	var mu sync.Mutex
	acl := zk.WorldACL(zk.PermAll)
	for {
		_, err := c.Create("/df", nil, 0, acl)
		if err == nil || err == zk.ErrNodeExists {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var next, ok, bad atomic.Int64
	next.Store(int64(base))
	var lastErr atomic.Value
	end := time.Now().Add(dur)
	var lastAck atomic.Int64
	lastAck.Store(time.Now().UnixNano())
	going := func() bool {
		now := time.Now()
		return now.Before(end) && now.Sub(time.Unix(0, lastAck.Load())) < idle
	}
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for going() {
				i := int(next.Add(1))
				if _, err := c.Create(path(i), body(i, size), 0, acl); err != nil {
					bad.Add(1)
					lastErr.Store(err.Error())
					time.Sleep(50 * time.Millisecond)
					continue
				}
				ok.Add(1)
				lastAck.Store(time.Now().UnixNano())
				mu.Lock()
				fmt.Fprintln(w, i)
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			mu.Lock()
			w.Flush()
			mu.Unlock()
			fmt.Printf("acked %d errors %d last error %v\n", ok.Load(), bad.Load(), lastErr.Load())
			return nil
		case <-tick.C:
			mu.Lock()
			w.Flush()
			mu.Unlock()
			fmt.Printf("%s acked %d errors %d last error %v\n", time.Now().Format("15:04:05"), ok.Load(), bad.Load(), lastErr.Load())
		}
	}
}

func check(server, ackedPath string, size int) error {
	c, err := connect([]string{server})
	if err != nil {
		return err
	}
	defer c.Close()
	b, err := os.ReadFile(ackedPath)
	if err != nil {
		return err
	}
	if _, err := c.Sync("/df"); err != nil {
		return err
	}
	var n, missing, wrong int
	for _, l := range strings.Fields(string(b)) {
		i, err := strconv.Atoi(l)
		if err != nil {
			return err
		}
		n++
		d, _, err := c.Get(path(i))
		if err == zk.ErrNoNode {
			missing++
			if missing < 5 {
				fmt.Println("missing", path(i))
			}
			continue
		}
		if err != nil {
			return err
		}
		if !bytes.Equal(d, body(i, size)) {
			wrong++
		}
	}
	kids, st, err := c.Children("/df")
	if err != nil {
		return err
	}
	fmt.Printf("%s: acked %d missing %d wrong %d; /df has %d children (cversion %d)\n", server, n, missing, wrong, len(kids), st.Cversion)
	if missing+wrong > 0 {
		return fmt.Errorf("%d acknowledged znodes missing, %d wrong", missing, wrong)
	}
	return nil
}
