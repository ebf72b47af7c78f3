// Command snapload loads and checks what scripts/probe/snap-catchup.sh
// needs: 64 KiB log appends or 1 KiB znodes through go-zookeeper, rows
// through the key-value store's Go client. Payload i is derived from i,
// so a check needs no state.
//
//	snapload zk-load -servers H:P -n N [-size B] [-c C] [-base I]
//	snapload zk-check -servers H:P -n N [-size B]   (every entry under /logs/a)
//	snapload kv-load -endpoints E -n N [-size B] [-c C]
//	snapload kv-leader -endpoints E                  (prints the leading endpoint's index from 1)
//	snapload kv-check -endpoints E -n N [-size B]    (scans through the first endpoint)
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/client/kvclient"
)

// body is payload i of size bytes.
func body(i, size int) []byte { return load.ValueFrom(uint32(i*2654435761+1)|1, size) }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: snapload zk-load|zk-check|kv-load|kv-leader|kv-check [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	servers := fs.String("servers", "", "ZooKeeper host:port")
	eps := fs.String("endpoints", "", "kv api endpoints host:port,...")
	n := fs.Int("n", 1000, "entries or rows")
	size := fs.Int("size", 64<<10, "bytes each")
	conc := fs.Int("c", 16, "in flight")
	base := fs.Int("base", 0, "first payload number (zk-load)")
	fs.Parse(os.Args[2:])
	var err error
	switch mode {
	case "zk-load":
		err = zkLoad(*servers, *n, *size, *conc, *base)
	case "zk-check":
		err = zkCheck(*servers, *n, *size)
	case "kv-load":
		err = kvLoad(strings.Split(*eps, ","), *n, *size, *conc)
	case "kv-leader":
		fmt.Println(kvLeader(strings.Split(*eps, ",")))
	case "kv-check":
		err = kvCheck(strings.Split(*eps, ",")[0], *n, *size)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "snapload:", err)
		os.Exit(1)
	}
}

func zkConnect(servers string) (*zk.Conn, error) {
	c, _, err := zk.Connect([]string{servers}, 30*time.Second, zk.WithLogInfo(false))
	return c, err
}

// zkLoad creates n sequential entries /logs/a/e<i>- of size bytes.
func zkLoad(servers string, n, size, conc, base int) error {
	c, err := zkConnect(servers)
	if err != nil {
		return err
	}
	defer c.Close()
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/logs", "/logs/a"} {
		if _, err := c.Create(p, nil, 0, acl); err != nil && err != zk.ErrNodeExists {
			return err
		}
	}
	next := make(chan int)
	errs := make(chan error, conc)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if _, err := c.Create(fmt.Sprintf("/logs/a/e%08d-", i), body(i, size), zk.FlagSequence, acl); err != nil {
					errs <- fmt.Errorf("append %d: %w", i, err)
					return
				}
			}
		}()
	}
	t0 := time.Now()
	for i := base; i < base+n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	el := time.Since(t0)
	fmt.Printf("appended %d x %d B in %v (%.1f MB/s)\n", n, size, el.Round(time.Millisecond), float64(n*size)/el.Seconds()/1e6)
	return nil
}

// zkCheck reads every entry under /logs/a and compares it with its body.
func zkCheck(servers string, n, size int) error {
	c, err := zkConnect(servers)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Sync("/logs/a"); err != nil {
		return err
	}
	kids, _, err := c.Children("/logs/a")
	if err != nil {
		return err
	}
	sort.Strings(kids)
	bad := 0
	for _, k := range kids {
		var i int
		fmt.Sscanf(k, "e%08d-", &i)
		b, _, err := c.Get("/logs/a/" + k)
		if err != nil || !bytes.Equal(b, body(i, size)) {
			bad++
		}
	}
	fmt.Printf("checked %d entries, %d bad\n", len(kids), bad)
	if bad > 0 || len(kids) != n {
		return fmt.Errorf("%d entries, %d bad; want %d", len(kids), bad, n)
	}
	return nil
}

// kvLoad puts n rows r<i> of one size-byte cell into table t.
func kvLoad(eps []string, n, size, conc int) error {
	ctx := context.Background()
	kc, err := kvclient.New(kvclient.Config{Endpoints: eps, RequestTimeout: 60 * time.Second})
	if err != nil {
		return err
	}
	defer kc.Close()
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "f"}}}); err != nil && status.Code(err) != codes.AlreadyExists {
		return err // (exists: a load again onto the same store)
	}
	t0 := time.Now()
	errs := make(chan error, conc)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += conc {
				if _, err := kc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte(fmt.Sprintf("r%08d", i)),
					Cells: []*kvpb.Cell{{Family: "f", Qualifier: []byte("q"), Value: body(i, size)}}}); err != nil {
					errs <- fmt.Errorf("put %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("loaded %d rows of %d B in %v\n", n, size, time.Since(t0).Round(time.Millisecond))
	return nil
}

// kvLeader returns the index (from 1) of the endpoint that answers a read
// itself, 0 if none does.
func kvLeader(eps []string) int {
	for i, ep := range eps {
		cc, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = kvpb.NewKVClient(cc).ListTables(ctx, &kvpb.ListTablesRequest{})
		cancel()
		cc.Close()
		if err == nil {
			return i + 1
		}
	}
	return 0
}

// kvCheck scans table t through ep and compares every row with its body.
func kvCheck(ep string, n, size int) error {
	cc, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cc.Close()
	seen, bad := 0, 0
	var from []byte
	for {
		resp, err := kvpb.NewKVClient(cc).Scan(context.Background(), &kvpb.ScanRequest{Table: "t", From: from, Limit: 500})
		if err != nil {
			return err
		}
		for _, r := range resp.GetRows() {
			var i int
			fmt.Sscanf(string(r.GetKey()), "r%08d", &i)
			if len(r.GetCells()) != 1 || !bytes.Equal(r.GetCells()[0].GetValue(), body(i, size)) {
				bad++
			}
			seen++
			from = append(append([]byte{}, r.GetKey()...), 0)
		}
		if len(resp.GetRows()) < 500 {
			break
		}
	}
	fmt.Printf("checked %d rows, %d bad\n", seen, bad)
	if seen != n || bad > 0 {
		return fmt.Errorf("%d rows, %d bad; want %d", seen, bad, n)
	}
	return nil
}
