package kv_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
)

// tableClient is a client over the comma-separated endpoints with table
// "t" (family "cf") created through it; it is closed when the test ends.
func tableClient(t *testing.T, endpoints string) *kvclient.Client {
	t.Helper()
	c, err := kvclient.New(kvclient.Config{Endpoints: strings.Split(endpoints, ","), RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.CreateTable(context.Background(), &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// loadCells is how many cells of loadValue bytes each row of a
// writeLoad has.
const (
	loadCells = 10
	loadValue = 100
)

// writeLoad is four writers putting rows "wW-NNNNN" of loadCells cells
// to table "t" (family "cf"), each in sequence, until finish is called:
// each writes at most perWriter rows and starts none after deadline.
type writeLoad struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	acked    [][]byte          // rows whose put was acknowledged
	versions map[string]uint64 // row -> the version its acknowledged put gave
}

func startWriteLoad(c *kvclient.Client, perWriter int, deadline time.Time) *writeLoad {
	l := &writeLoad{stop: make(chan struct{}), versions: map[string]uint64{}}
	for w := range 4 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; i < perWriter && time.Now().Before(deadline); i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				row := []byte(fmt.Sprintf("w%d-%05d", w, i))
				var cells []*kvpb.Cell
				for q := range loadCells {
					cells = append(cells, &kvpb.Cell{Family: "cf", Qualifier: []byte(fmt.Sprint(q)), Value: bytes.Repeat([]byte{byte('a' + q)}, loadValue)})
				}
				if resp, err := c.Put(context.Background(), &kvpb.PutRequest{Table: "t", Row: row, Cells: cells}); err == nil {
					l.mu.Lock()
					l.acked = append(l.acked, row)
					l.versions[string(row)] = resp.GetVersion()
					l.mu.Unlock()
				}
			}
		}()
	}
	return l
}

// version is the version row's acknowledged put gave (0: none was
// acknowledged).
func (l *writeLoad) version(row []byte) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.versions[string(row)]
}

// lastVersion is the highest version an acknowledged put gave: the zxid
// every member must apply to hold every acknowledged row.
func (l *writeLoad) lastVersion() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var last uint64
	for _, v := range l.versions {
		last = max(last, v)
	}
	return last
}

// finish stops the writers, waits for them and returns the rows whose
// put was acknowledged.
func (l *writeLoad) finish() [][]byte {
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked
}
