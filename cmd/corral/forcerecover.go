package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/proc"
)

// peerProbeTimeout bounds one peer's srvr while -force-recover reports the
// spread of the members' zxids.
const peerProbeTimeout = time.Second

// reportPeerZxids prints, before a forced recovery starts, what every other
// member whose server.N line has a client part says in srvr: its zxid and
// whether it is recovering (or that it did not answer). With the zxid this
// member prints once its snapshot is loaded, the operator sees the spread:
// the writes after the highest zxid are lost, the others are kept by the
// member that holds them.
func reportPeerZxids(ctx context.Context, w io.Writer, cfg *config.Config) {
	for _, s := range cfg.Servers {
		if s.ID == cfg.MyID || s.ClientPort == 0 {
			continue
		}
		host := s.ClientAddr
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = s.Host
		}
		addr := net.JoinHostPort(host, strconv.Itoa(s.ClientPort))
		out, err := proc.FourLetter(ctx, addr, []byte("srvr"), peerProbeTimeout)
		if err != nil {
			fmt.Fprintf(w, "corral: -force-recover: member %d (%s): no answer (%v)\n", s.ID, addr, err)
			continue
		}
		state := "mode " + proc.SrvrMode(out)
		if strings.Contains(out, "\nRecovering: ") {
			state = "recovering"
		}
		fmt.Fprintf(w, "corral: -force-recover: member %d (%s): zxid %s, %s\n", s.ID, addr, srvrZxid(out), state)
	}
}

// srvrZxid is srvr's "Zxid:" value, or "unknown".
func srvrZxid(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Zxid: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
