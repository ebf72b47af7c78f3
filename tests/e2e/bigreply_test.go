package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// TestOversizedReply: a getChildren whose reply exceeds jute.maxbuffer
// (1 MiB). Observed on ZooKeeper 3.9.3: the server sends the whole reply
// (the limit is enforced by clients, which then drop the connection —
// Java's "Packet len is out of range"); the request fails at such a client
// and the server is unharmed. corral must do the same.
func TestOversizedReply(t *testing.T) {
	srv := env.Start(t)
	c, _ := connect(t, srv)
	open := zk.WorldACL(zk.PermAll)
	try(c.Create("/big", nil, 0, open)).must(t)
	name := strings.Repeat("x", 240)
	// 4600 children × ~244 bytes of name ≈ 1.1 MB of reply.
	const n = 4600
	for i := 0; i < n; i += 100 {
		var ops []any
		for j := i; j < i+100 && j < n; j++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/big/%s%05d", name, j), Acl: open})
		}
		if _, err := c.Multi(ops...); err != nil {
			t.Fatal(err)
		}
	}
	r := harness.DialSession(t, srv.Addr(), 30000)
	p, _ := r.Call(wire.OpGetChildren, harness.PathWatchBody("/big", false))
	if p.Err != wire.CodeOK || len(p.Body) <= 1<<20 {
		t.Fatalf("reply: err %v, body %d bytes; want the whole >1 MiB reply as ZooKeeper sends it", p.Err, len(p.Body))
	}
	if kids := p.Decoder().Strings(); len(kids) != n {
		t.Errorf("reply lists %d children, want %d", len(kids), n)
	}
	// The server still serves this and other connections.
	if _, _, err := c.Exists("/big"); err != nil {
		t.Errorf("server stopped serving after the oversized reply: %v", err)
	}
}
