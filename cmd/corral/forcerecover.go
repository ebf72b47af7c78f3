package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
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
// whether it is recovering (or that it did not answer), beside this
// member's newest snapshot, so the operator sees the spread. It refuses
// (an error) when a member that answers recovering holds a newer snapshot
// than this one: forced first, this member and another could form a
// quorum that elects a leader without that member's newer writes. Forced
// in decreasing zxid order (each once the previous answers srvr), the
// newest is always in the first quorum.
func reportPeerZxids(ctx context.Context, w io.Writer, cfg *config.Config) error {
	own := newestSnapshotZxid(filepath.Join(cfg.DataDir, "version-2"))
	fmt.Fprintf(w, "corral: -force-recover: member %d (this one): newest snapshot zxid %#x\n", cfg.MyID, own)
	for _, s := range cfg.Servers {
		if s.ID == cfg.MyID || s.ClientPort == 0 || s.Observer {
			continue
		}
		host := s.ClientAddr
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = s.Host
		}
		addr := net.JoinHostPort(host, strconv.Itoa(s.ClientPort))
		out, err := proc.FourLetter(ctx, addr, []byte("srvr"), peerProbeTimeout)
		if err != nil {
			fmt.Fprintf(w, "corral: -force-recover: member %d (%s): no answer (%v); force the members in decreasing zxid order\n", s.ID, addr, err)
			continue
		}
		zx := srvrZxid(out)
		if !strings.Contains(out, "\nRecovering: ") {
			fmt.Fprintf(w, "corral: -force-recover: member %d (%s): zxid %s, mode %s\n", s.ID, addr, zx, proc.SrvrMode(out))
			continue
		}
		fmt.Fprintf(w, "corral: -force-recover: member %d (%s): zxid %s, recovering\n", s.ID, addr, zx)
		if z, err := strconv.ParseInt(strings.TrimPrefix(zx, "0x"), 16, 64); err == nil && z > own {
			return fmt.Errorf("member %d is recovering with a newer snapshot (%s) than this member's (%#x): "+
				"restart it with -force-recover first (decreasing zxid order), then this one", s.ID, zx, own)
		}
	}
	return nil
}

// newestSnapshotZxid is the zxid of the newest snapshot.<hex> file in dir,
// or 0.
func newestSnapshotZxid(dir string) int64 {
	ents, _ := os.ReadDir(dir)
	var newest int64
	for _, e := range ents {
		if h, ok := strings.CutPrefix(e.Name(), "snapshot."); ok {
			if z, err := strconv.ParseInt(h, 16, 64); err == nil && z > newest {
				newest = z
			}
		}
	}
	return newest
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
