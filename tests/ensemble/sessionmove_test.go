package ensemble

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// TestSessionMoveRefusesOldMembersWrite: a client's create is held on
// its way to a follower A (a stalled link); the client gives up on A,
// moves its session to another follower B, and looks for its node there
// (as Curator's protected mode does after a lost reply): not found. Only
// then does A receive the held create, on a connection it still thinks
// holds the session, and forwards it. The leader knows from B's
// revalidation that B owns the session, and refuses it (SessionMoved): A
// closes that connection instead of answering, and the node never
// appears, so the client's look-up stays true. Writes of other clients
// run meanwhile and all land.
func TestSessionMoveRefusesOldMembersWrite(t *testing.T) {
	t.Parallel()
	ens := start(t, 3)
	load := startCreates(t, ens, "/smload", defaultLoad(2))
	load.waitProgress(t, progressStep, "start")

	leader := ens.WaitQuorum()
	fs := ens.Followers(leader)
	a, b := fs[0], fs[1]
	setup := connectAll(t, ens, 0, "setup")
	if _, err := setup.Create("/smove", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create /smove: %v", err)
	}

	px := newHoldProxy(t, ens.Server(a).Addr())
	sessions := make(chan struct{}, 4)
	lw := harness.NewLogWriter(t, "go-zk mover: ")
	c, _, err := zk.Connect([]string{px.addr(), ens.Server(b).Addr()}, sessionTimeout,
		zk.WithLogger(testLogger{lw}), zk.WithLogInfo(false),
		zk.WithHostProvider(&preferHosts{ringHosts: newRingHosts(0), prefer: px.addr()}), zk.WithDialer(cappedDial),
		zk.WithEventCallback(func(ev zk.Event) {
			if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
				select {
				case sessions <- struct{}{}:
				default:
				}
			}
		}))
	if err != nil {
		t.Fatalf("zk.Connect: %v", err)
	}
	t.Cleanup(func() { c.Close(); lw.Stop() })
	awaitSession(t, sessions, "through the proxy to A")
	if c.Server() != px.addr() {
		t.Fatalf("connected to %s, want A through the proxy (%s)", c.Server(), px.addr())
	}
	if _, err := c.Create("/smove/before", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create through A: %v", err)
	}

	// The create leaves the client and stalls on the way to A.
	px.hold()
	guid := fmt.Sprintf("_c_%d-lock-", time.Now().UnixNano())
	created := make(chan error, 1)
	go func() {
		_, err := c.Create("/smove/"+guid, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		created <- err
	}()
	testutil.Eventually(t, 20*time.Second, "the create held by the proxy", func() bool {
		return px.holds([]byte(guid))
	})
	// The client loses A and moves to B.
	px.cutClient()
	if err := <-created; err == nil {
		t.Fatal("the held create was answered")
	}
	awaitSession(t, sessions, "on B after the move")
	if hasChild(t, c, "/smove", guid) {
		t.Fatal("the held create landed before A received it")
	}

	// Now A receives it.
	px.flush()
	answered, closed := px.outcome(30 * time.Second)
	if answered != "" {
		t.Fatalf("A answered the old connection's create after the move (%s); want the connection closed", answered)
	}
	if !closed {
		t.Fatal("A neither answered nor closed the old connection")
	}
	if _, err := c.Sync("/smove"); err != nil {
		t.Fatalf("sync on B: %v", err)
	}
	if hasChild(t, c, "/smove", guid) {
		t.Fatal("the create A forwarded after the session moved to B was applied")
	}

	// The load's check counts every znode: remove this test's own.
	for _, p := range []string{"/smove/before", "/smove"} {
		if err := setup.Delete(p, -1); err != nil {
			t.Fatalf("delete %s: %v", p, err)
		}
	}
	load.halt(t)
	ens.WaitAll()
	load.verify(t, ens)
}

// preferHosts is a ringHosts that starts at the address prefer, wherever
// go-zk's shuffle put it.
type preferHosts struct {
	*ringHosts
	prefer string
}

func (h *preferHosts) Init(servers []string) error {
	for i, s := range servers {
		if s == h.prefer {
			h.ringHosts.first = i
		}
	}
	return h.ringHosts.Init(servers)
}

func awaitSession(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(sessionWait):
		t.Fatalf("no session %s within %s", what, sessionWait)
	}
}

// hasChild reports whether parent has a child whose name starts with
// prefix.
func hasChild(t *testing.T, c *zk.Conn, parent, prefix string) bool {
	t.Helper()
	kids, _, err := c.Children(parent)
	if err != nil {
		t.Fatalf("children %s: %v", parent, err)
	}
	for _, k := range kids {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// holdProxy relays one client connection to a server and can stall the
// client-to-server direction (hold), drop the client side while keeping
// the server side open (cutClient), and then deliver what it held
// (flush). After the cut it records what the server sends back.
type holdProxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu       sync.Mutex
	held     bool
	buf      []byte // client bytes held back
	cli, srv net.Conn
	cut      bool
	after    []byte // server bytes after the cut
	srvGone  bool   // the server closed its side
}

func newHoldProxy(t *testing.T, target string) *holdProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{t: t, ln: ln, target: target}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range []net.Conn{p.cli, p.srv} {
			if c != nil {
				c.Close()
			}
		}
	})
	go p.accept()
	return p
}

func (p *holdProxy) addr() string { return p.ln.Addr().String() }

// accept relays the first connection; later ones (a client retrying
// while the first is cut) are refused.
func (p *holdProxy) accept() {
	cli, err := p.ln.Accept()
	if err != nil {
		return
	}
	p.ln.Close()
	srv, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		cli.Close()
		return
	}
	p.mu.Lock()
	p.cli, p.srv = cli, srv
	p.mu.Unlock()
	go func() { // client to server
		b := make([]byte, 64<<10)
		for {
			n, err := cli.Read(b)
			if n > 0 {
				p.mu.Lock()
				if p.held {
					p.buf = append(p.buf, b[:n]...)
					n = 0
				}
				p.mu.Unlock()
				if n > 0 {
					srv.Write(b[:n])
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // server to client
		b := make([]byte, 64<<10)
		for {
			n, err := srv.Read(b)
			p.mu.Lock()
			cut := p.cut
			if cut {
				p.after = append(p.after, b[:n]...)
			}
			if err != nil {
				p.srvGone = true
			}
			p.mu.Unlock()
			if !cut && n > 0 {
				cli.Write(b[:n])
			}
			if err != nil {
				return
			}
		}
	}()
}

func (p *holdProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = true
}

func (p *holdProxy) holds(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Contains(p.buf, b)
}

func (p *holdProxy) cutClient() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.cli.Close()
}

func (p *holdProxy) flush() {
	p.mu.Lock()
	b := p.buf
	p.buf = nil
	p.mu.Unlock()
	if _, err := p.srv.Write(b); err != nil {
		p.t.Fatalf("deliver the held bytes: %v", err)
	}
}

// outcome waits until the server answers a request after the cut (a
// reply that is neither a ping's nor a notification: it returns its xid
// and error) or closes the connection.
func (p *holdProxy) outcome(limit time.Duration) (answered string, closed bool) {
	testutil.Within(limit, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		answered = replyTo(p.after)
		closed = p.srvGone
		return answered != "" || closed
	})
	return answered, closed
}

// replyTo finds, in server-to-client frames, a reply to a request (xid
// not -1, a notification, nor -2, a ping).
func replyTo(b []byte) string {
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b))
		if len(b) < 4+n || n < 16 {
			return ""
		}
		f := b[4 : 4+n]
		xid := int32(binary.BigEndian.Uint32(f))
		code := int32(binary.BigEndian.Uint32(f[12:]))
		if xid != -1 && xid != -2 {
			return fmt.Sprintf("xid %d, err %d", xid, code)
		}
		b = b[4+n:]
	}
	return ""
}
