package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/config"
)

// cmdConfig is zkCli's config (GetConfigCommand): the ensemble's
// configuration (/zookeeper/config), with -c only the version and the
// client addresses, -s its stat, -w a watch.
func cmdConfig(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	var (
		data []byte
		stat client.Stat
		ch   <-chan client.Event
		err  error
	)
	if o.has('w') {
		data, stat, ch, err = s.conn.GetConfigW(ctx)
		s.watch(ch)
	} else {
		data, stat, err = s.conn.GetConfig(ctx)
	}
	if err != nil {
		return &opError{client.ConfigPath, err}
	}
	if o.has('c') {
		fmt.Fprintln(out, clientConfigString(string(data)))
	} else {
		fmt.Fprintln(out, string(data))
	}
	if o.has('s') {
		writeStat(out, stat, s.cfg.Location)
	}
	return nil
}

// clientConfigString is ConfigUtils.getClientConfigStr: the version, a
// space, and the servers' client addresses joined by commas.
func clientConfigString(text string) string {
	servers, version, _, err := config.ParseDynamic(text)
	if err != nil {
		return text
	}
	var addrs []string
	for _, sv := range servers {
		if sv.ClientPort == 0 {
			addrs = append(addrs, "")
			continue
		}
		host := sv.ClientAddr
		if host == "" {
			host = "0.0.0.0"
		}
		addrs = append(addrs, host+":"+strconv.Itoa(sv.ClientPort))
	}
	return strconv.FormatUint(uint64(version), 16) + " " + strings.Join(addrs, ",")
}

// cmdReconfig is zkCli's reconfig (ReconfigCommand): -add and -remove
// change the membership incrementally, -members or -file (a dynamic
// configuration file) replace it; -v is the expected configuration
// version in hex; -s prints the new stat.
func cmdReconfig(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	joining, hasJoining := o.longs["add"]
	leaving, hasLeaving := o.longs["remove"]
	members, hasMembers := o.longs["members"]
	version := int64(-1)
	if v, ok := o.values['v']; ok {
		n, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			return usagef("-v must be followed by a long (configuration version)")
		}
		version = int64(n)
	}
	if f, ok := o.longs["file"]; ok {
		data, err := os.ReadFile(f)
		if err != nil {
			return usagef("Error processing " + f + err.Error())
		}
		servers, v, hasVersion, err := config.ParseDynamic(string(data))
		if err != nil {
			return usagef("Error processing " + f + err.Error())
		}
		if !hasVersion {
			v = 0
		}
		members, hasMembers = config.FormatQuorumConfig(servers, v), true
	}
	if (hasJoining || hasLeaving) && hasMembers {
		return usagef("Can't use -members or -file with -add or -remove (mixing incremental and non-incremental modes is not allowed)")
	}
	if !hasJoining && !hasLeaving && !hasMembers {
		return usagef("No changes requested")
	}
	data, stat, err := s.conn.Reconfig(ctx, joining, leaving, members, version)
	if err != nil {
		return &opError{client.ConfigPath, err}
	}
	fmt.Fprintf(out, "Committed new configuration:\n%s\n", data)
	if o.has('s') {
		writeStat(out, stat, s.cfg.Location)
	}
	return nil
}
