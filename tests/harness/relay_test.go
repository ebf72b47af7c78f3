package harness

import (
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestRelayCutHoldsAndHealDelivers: a relay forwards both ways; while its
// pair is cut nothing crosses and the connection stays open; the heal
// delivers what was held, in order; a connection made during the cut
// reaches the target only after the heal; a one-way cut holds one
// direction only.
func TestRelayCutHoldsAndHealDelivers(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	rn := NewRelays(t)
	port := rn.Relay(0, 1, target.Addr().(*net.TCPAddr).Port)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	defer s.Close()
	roundTrip := func(msg string) {
		t.Helper()
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(s, buf); err != nil || string(buf) != msg {
			t.Fatalf("forward: %q %v, want %q", buf, err, msg)
		}
		if _, err := s.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
			t.Fatalf("back: %q %v, want %q", buf, err, msg)
		}
	}
	roundTrip("before")

	rn.SetCut(1, 0, true) // either order names the pair
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	s.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := s.Read(make([]byte, 4)); n != 0 || !isTimeout(err) {
		t.Fatalf("read across a cut: %d bytes, %v; want nothing", n, err)
	}
	s.SetReadDeadline(time.Time{})
	late, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	select {
	case x := <-accepted:
		x.Close()
		t.Fatal("a connection made during the cut reached the target")
	case <-time.After(300 * time.Millisecond):
	}

	rn.Heal()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "held" {
		t.Fatalf("after heal: %q %v, want the held bytes", buf, err)
	}
	roundTrip("after")
	select {
	case x := <-accepted:
		x.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the connection made during the cut did not reach the target after the heal")
	}

	// One way: member 0's bytes are held, member 1's still arrive.
	rn.CutOneWay(0, 1)
	if _, err := c.Write([]byte("out")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("in")); err != nil {
		t.Fatal(err)
	}
	in := make([]byte, 2)
	if _, err := io.ReadFull(c, in); err != nil || string(in) != "in" {
		t.Fatalf("the open way: %q %v", in, err)
	}
	s.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := s.Read(make([]byte, 3)); n != 0 || !isTimeout(err) {
		t.Fatalf("read across a one-way cut: %d bytes, %v; want nothing", n, err)
	}
	s.SetReadDeadline(time.Time{})
	rn.Heal()
	out := make([]byte, 3)
	if _, err := io.ReadFull(s, out); err != nil || string(out) != "out" {
		t.Fatalf("after heal: %q %v, want the held bytes", out, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
