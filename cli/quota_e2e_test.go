package cli_test

import (
	"os"
	"testing"

	"github.com/corral-db/corral/tests/harness"
)

// TestQuota runs zkCli's quota commands against a server with
// enforceQuota=true: the limits and stats nodes as ZooKeeper 3.9.3 writes
// and maintains them, a hard count limit refusing a create with
// QuotaExceeded, the parent/child checks, delquota. The expectations are
// ZooKeeper's (CORRAL_E2E_TARGET=zookeeper runs them against it).
func TestQuota(t *testing.T) {
	_ = os.Getenv(harness.EnvTarget)
	_ = os.Getenv(harness.EnvCorralBin)
	srv := env.StartWith(t, harness.Config{Extra: []string{"enforceQuota=true"}})
	const abs = "absolute path is /zookeeper/quota/q/zookeeper_limits\n"
	runSteps(t, srv.Addr(), []step{
		{args: "create /q", out: "Created /q\n"},
		{args: "create /q/a 12345", out: "Created /q/a\n"},
		{args: "listquota /q", err: abs + "quota for /q does not exist.\n"},
		{args: "setquota -N 4 /q"},
		{args: "listquota /q", err: abs,
			out: "Output quota for /q count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=4\nOutput stat for /q count=2,bytes=5\n"},
		{args: "get /zookeeper/quota/q/zookeeper_stats", out: "count=2,bytes=5\n"},
		{args: "create /q/b xy", out: "Created /q/b\n"},
		{args: "create /q/a/c", out: "Created /q/a/c\n"},
		{args: "create /q/d", err: "KeeperErrorCode = Quota has exceeded for /q/d\n", code: 1},
		{args: "create /qq", out: "Created /qq\n"}, // a sibling with a common prefix is not under /q
		{args: "set /q/b 1234567"},
		{args: "listquota /q", err: abs,
			out: "Output quota for /q count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=4\nOutput stat for /q count=4,bytes=12\n"},
		{args: "setquota -b 3 /q", out: "[Warning]: the bytes quota you create is less than the existing bytes:12\n"},
		{args: "setquota -N 4 /q/a", err: "/q/a has a parent /q which has a quota\n", code: 1},
		{args: "create /p", out: "Created /p\n"},
		{args: "create /p/x", out: "Created /p/x\n"},
		{args: "setquota -n 5 /p/x"},
		{args: "setquota -n 1 /p", err: "/p has a child /p/x which has a quota\n", code: 1},
		{args: "delquota /p/x"},
		{args: "deleteall /p"},
		{args: "setquota -n 1 /nope", err: "/nope does not exist.\n", code: 1},
		{args: "setquota -n 0 /q", err: "the num quota must be greater than zero\n"},
		{args: "setquota -n 1 /zookeeper/quota/q", err: "cannot set a quota under the path: /zookeeper/quota\n"},
		// Soft limits only log: the write goes through.
		{args: "delquota -N /q"},
		{args: "create /q/d", out: "Created /q/d\n"},
		{args: "listquota /q", err: abs,
			out: "Output quota for /q count=-1,bytes=3=;byteHardLimit=-1;countHardLimit=-1\nOutput stat for /q count=5,bytes=12\n"},
		{args: "delquota /q"},
		{args: "listquota /q", err: abs + "quota for /q does not exist.\n"},
		{args: "ls /zookeeper/quota", out: "[]\n"},
		{args: "delquota /q", out: "Quota does not exist for /q\n"},
		{args: "deleteall /q"},
		{args: "delete /qq"},
	})
}
