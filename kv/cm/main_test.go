package cm

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/tests/harness"
)

// env runs a real corral (or, with CORRAL_E2E_TARGET=zookeeper, Apache
// ZooKeeper) for these tests; CORRAL_BIN names a prebuilt corral.
var env *harness.Env

func TestMain(m *testing.M) {
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// waitLimit bounds what must happen eventually; nothing asserts how long.
const waitLimit = 20 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

func connect(t *testing.T, addr string) *client.Conn {
	t.Helper()
	c, err := client.Connect(testCtx(t), []string{addr}, client.SessionTimeout(10*time.Second))
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newStore(t *testing.T, c *client.Conn) *Store {
	t.Helper()
	s, err := NewStore(c, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
