package client

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strings"

	"github.com/corral-db/corral/wire"
)

// DefaultPort is used for a server given without a port.
const DefaultPort = "2181"

// parseServers turns Connect's server list into addresses and a chroot.
// Each element may itself be a comma-separated list, and the connect
// string may end in a chroot, as in ZooKeeper's connect strings:
// "h1:2181,h2:2181/app". As in ConnectStringParser, the chroot starts at
// the first '/' of the whole string; "/" alone means none.
func parseServers(servers []string) (addrs []string, chroot string, err error) {
	s := strings.Join(servers, ",")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s, chroot = s[:i], s[i:]
	}
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			// No port (or an IPv6 literal without one): use the default.
			h = net.JoinHostPort(strings.Trim(h, "[]"), DefaultPort)
		}
		addrs = append(addrs, h)
	}
	if len(addrs) == 0 {
		return nil, "", fmt.Errorf("zk: no server addresses in %q: %w", servers, wire.CodeBadArguments)
	}
	chroot, err = cleanChroot(chroot)
	return addrs, chroot, err
}

// cleanChroot validates a chroot; "" and "/" mean none.
func cleanChroot(p string) (string, error) {
	if p == "" || p == "/" {
		return "", nil
	}
	if p[0] != '/' || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return "", fmt.Errorf("zk: invalid chroot %q: %w", p, wire.CodeBadArguments)
	}
	return p, nil
}

// hostList hands out the servers in a shuffled order, round robin, and
// reports when it has gone all the way round so the caller can back off.
type hostList struct {
	addrs []string
	next  int
}

func newHostList(addrs []string, r *rand.Rand) *hostList {
	h := &hostList{addrs: append([]string(nil), addrs...)}
	r.Shuffle(len(h.addrs), func(i, j int) { h.addrs[i], h.addrs[j] = h.addrs[j], h.addrs[i] })
	return h
}

// take returns the next address and whether it starts a new round.
func (h *hostList) take() (addr string, wrapped bool) {
	addr = h.addrs[h.next]
	h.next++
	if h.next == len(h.addrs) {
		h.next = 0
		wrapped = true
	}
	return addr, wrapped
}

func (h *hostList) len() int { return len(h.addrs) }

// serverPath maps a caller's path into the chroot. The path must be
// absolute; everything else about it is checked by the server, which
// answers wire.CodeBadArguments as ZooKeeper does.
func (c *Conn) serverPath(p string) (string, error) {
	if p == "" || p[0] != '/' {
		return "", errBadPath
	}
	if c.chroot == "" {
		return p, nil
	}
	if p == "/" {
		return c.chroot, nil
	}
	return c.chroot + p, nil
}

// clientPath maps a server path back under the chroot. A path outside the
// chroot (only /zookeeper/config, read by GetConfig) is returned as is.
func (c *Conn) clientPath(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == c.chroot {
		return "/"
	}
	if len(p) > len(c.chroot) && p[len(c.chroot)] == '/' && strings.HasPrefix(p, c.chroot) {
		return p[len(c.chroot):]
	}
	return p
}

// inChroot reports whether a server path lies under the chroot.
func (c *Conn) inChroot(p string) bool {
	if c.chroot == "" || p == c.chroot {
		return true
	}
	return len(p) > len(c.chroot) && p[len(c.chroot)] == '/' && strings.HasPrefix(p, c.chroot)
}
