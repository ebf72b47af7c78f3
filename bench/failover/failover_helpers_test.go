package failover

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/fakezk"
)

func failoverBenchTestCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestMain(m *testing.M) {
	if os.Getenv(fakezk.ProcessEnv) == "1" {
		os.Exit(fakezk.ServeMain(os.Args[1:], FailoverPath))
	}
	os.Exit(m.Run())
}
