package readratio

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/internal/fakezk"
)

func readratioBenchTestCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// readratioPreloadFake gives an in-process fake server every node of ks.
func readratioPreloadFake(s *fakezk.Server, ks *load.KeySpace, data []byte) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for k, c := range ks.Counts {
		for i := range c {
			p := ks.Path(k, i)
			s.Nodes[p], s.Attempted[p] = data, true
		}
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(fakezk.ProcessEnv) == "1" {
		os.Exit(fakezk.ServeMain(os.Args[1:], failover.FailoverPath))
	}
	os.Exit(m.Run())
}
