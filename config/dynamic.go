package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-db/corral/internal/atomicfile"
)

// Dynamic configuration (ZooKeeper's zookeeperReconfig): the servers of
// an ensemble that changes its membership online live in a dynamic file,
// zoo.cfg.dynamic.<version in hex>, which the static zoo.cfg names with
// dynamicConfigFile; /zookeeper/config serves the same lines and the
// version. The reconfig operation reads server specs in the server.N form.

// ErrServerSpec reports a server spec or configuration text that does not
// parse (the reconfig operation answers BADARGUMENTS).
var ErrServerSpec = errors.New("bad server spec")

// ParseServerSpec parses "server.N=host:quorumPort:electionPort[:role][;[clientAddr:]clientPort]",
// the form of a joining server in a reconfig request (ZooKeeper's
// QuorumServer), white space around the parts allowed.
func ParseServerSpec(spec string) (Server, error) {
	key, value, ok := strings.Cut(spec, "=")
	if !ok || strings.Contains(value, "=") {
		return Server{}, fmt.Errorf("%w: %q: want server.N=host:port:port[:role];[addr:]port", ErrServerSpec, spec)
	}
	// ZooKeeper takes the id after the key's last dot: "server.4" and
	// "4" alike.
	key = javaTrim(key)
	id, err := parseSpecID(key[strings.LastIndexByte(key, '.')+1:])
	if err != nil {
		return Server{}, err
	}
	s, err := parseServerLine(key, id, value)
	if err != nil {
		return Server{}, fmt.Errorf("%w: %v", ErrServerSpec, err)
	}
	return s, nil
}

// ParseDynamic parses a configuration text: server.N lines and an
// optional version=<hex> (the text of /zookeeper/config, a dynamic file,
// or a reconfig's newMembers with its commas made line breaks). hasVersion
// reports whether a version line was there.
func ParseDynamic(text string) (servers []Server, version int64, hasVersion bool, err error) {
	props, err := readProperties(strings.NewReader(text))
	if err != nil {
		return nil, 0, false, fmt.Errorf("%w: %v", ErrServerSpec, err)
	}
	seen := map[int64]bool{}
	for _, pr := range props {
		k, v := javaTrim(pr.Key), javaTrim(pr.Value)
		switch {
		case strings.HasPrefix(k, serverKeyPrefix):
			id, err := parseSpecID(strings.TrimPrefix(k, serverKeyPrefix))
			if err != nil {
				return nil, 0, false, err
			}
			if seen[id] {
				return nil, 0, false, fmt.Errorf("%w: server %d listed twice", ErrServerSpec, id)
			}
			seen[id] = true
			s, err := parseServerLine(k, id, v)
			if err != nil {
				return nil, 0, false, fmt.Errorf("%w: %v", ErrServerSpec, err)
			}
			servers = append(servers, s)
		case k == "version":
			u, err := strconv.ParseUint(v, 16, 64)
			if err != nil {
				return nil, 0, false, fmt.Errorf("%w: version %q is not hexadecimal", ErrServerSpec, v)
			}
			version, hasVersion = int64(u), true
		case strings.HasPrefix(k, "group") || strings.HasPrefix(k, "weight"):
			return nil, 0, false, fmt.Errorf("%w: %s: hierarchical quorums are not supported", ErrServerSpec, k)
		default:
			return nil, 0, false, fmt.Errorf("%w: %s: only server.N and version may appear", ErrServerSpec, k)
		}
	}
	slices.SortFunc(servers, func(a, b Server) int { return cmp.Compare(a.ID, b.ID) })
	return servers, version, hasVersion, nil
}

// parseSpecID reads a server id in a configuration the ensemble is asked
// to adopt: any positive number, as ZooKeeper's (Long.parseLong). Only a
// server that runs corral is bound to MaxServerID (its own myid), which
// Load checks.
func parseSpecID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%w: server id %q is not a positive number", ErrServerSpec, s)
	}
	return id, nil
}

// CheckAddresses refuses two servers sharing a quorum, election or client
// address (QuorumServer.checkAddressDuplicate).
func CheckAddresses(servers []Server) error {
	seen := map[string]int64{}
	for _, s := range servers {
		addrs := []string{s.QuorumAddr(), s.ElectionAddr()}
		if s.ClientPort != 0 && s.ClientAddr != "" {
			addrs = append(addrs, hostPortString(s.ClientAddr, s.ClientPort))
		}
		for _, a := range addrs {
			if other, ok := seen[a]; ok && other != s.ID {
				return fmt.Errorf("%w: servers %d and %d share the address %s", ErrServerSpec, other, s.ID, a)
			}
			seen[a] = s.ID
		}
	}
	return nil
}

// FormatQuorumConfig is the configuration text ZooKeeper 3.9 serves in
// /zookeeper/config (QuorumMaj.toString): one line per server in id
// order, then "version=" and the version in hex, no trailing newline.
func FormatQuorumConfig(servers []Server, version int64) string {
	var sb strings.Builder
	writeServerLines(&sb, servers)
	sb.WriteString("version=" + strconv.FormatUint(uint64(version), 16))
	return sb.String()
}

// writeServerLines writes "server.N=host:quorumPort:electionPort:role"
// and ";clientAddr:clientPort" when the server names a client port (a
// bare port is the wildcard address, 0.0.0.0), one line each, in id order.
func writeServerLines(sb *strings.Builder, servers []Server) {
	servers = slices.Clone(servers)
	slices.SortFunc(servers, func(a, b Server) int { return cmp.Compare(a.ID, b.ID) })
	for _, s := range servers {
		kind := "participant"
		if s.Observer {
			kind = "observer"
		}
		fmt.Fprintf(sb, "server.%d=%s:%d:%d:%s", s.ID, bracketHost(s.Host), s.QuorumPort, s.ElectionPort, kind)
		if s.ClientPort != 0 {
			sb.WriteString(";" + hostPortString(s.ClientAddr, s.ClientPort))
		}
		sb.WriteByte('\n')
	}
}

// DynamicFileName is the dynamic file ZooKeeper writes for a
// configuration version beside the static file: <static>.dynamic.<hex>.
func DynamicFileName(staticPath string, version int64) string {
	return staticPath + ".dynamic." + strconv.FormatUint(uint64(version), 16)
}

// versionFromFileName is the hex suffix of a dynamic file's name
// (QuorumPeerConfig.getVersionFromFilename); ok is false without one.
func versionFromFileName(path string) (int64, bool) {
	i := strings.LastIndex(path, ".dynamic.")
	if i < 0 {
		return 0, false
	}
	u, err := strconv.ParseUint(path[i+len(".dynamic."):], 16, 64)
	if err != nil {
		return 0, false
	}
	return int64(u), true
}

// WriteDynamicConfig does what a ZooKeeper 3.9 member does when a
// configuration becomes its committed one (QuorumPeer.setQuorumVerifier
// with writeToDisk): it writes the servers to <static>.dynamic.<version>
// (server lines only, the version being in the name) and rewrites the
// static file without server.N, group, weight, peerType and
// dynamicConfigFile keys — and without clientPort and clientPortAddress
// when eraseClient (this server's line names its client address) — adding
// dynamicConfigFile=<absolute path of the new file>. Both files are
// replaced atomically (written aside, synced, renamed). It returns the
// dynamic file's path.
func WriteDynamicConfig(staticPath string, servers []Server, version int64, eraseClient bool) (string, error) {
	dyn := DynamicFileName(staticPath, version)
	var sb strings.Builder
	writeServerLines(&sb, servers)
	if err := writeFileAtomic(dyn, []byte(sb.String())); err != nil {
		return "", err
	}
	old, err := os.ReadFile(staticPath)
	if err != nil {
		return "", err
	}
	props, err := readProperties(bytes.NewReader(old))
	if err != nil {
		return "", fmt.Errorf("%s: %w", staticPath, err)
	}
	absDyn, err := filepath.Abs(dyn)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, pr := range props {
		k := javaTrim(pr.Key)
		if strings.HasPrefix(k, serverKeyPrefix) || strings.HasPrefix(k, "group") || strings.HasPrefix(k, "weight") ||
			strings.HasPrefix(k, "dynamicConfigFile") || strings.HasPrefix(k, "peerType") ||
			(eraseClient && strings.HasPrefix(k, "clientPort")) {
			continue
		}
		out.WriteString(escapeProperty(k, true) + "=" + escapeProperty(javaTrim(pr.Value), false) + "\n")
	}
	out.WriteString("dynamicConfigFile=" + escapeProperty(absDyn, false) + "\n")
	if err := writeFileAtomic(staticPath, []byte(out.String())); err != nil {
		return "", err
	}
	return dyn, nil
}

// NextDynamicFileName is the file ZooKeeper keeps the last proposed,
// not yet committed, configuration in: <static>.dynamic.next
// (QuorumPeerConfig.nextDynamicConfigFileSuffix).
func NextDynamicFileName(staticPath string) string {
	return staticPath + ".dynamic.next"
}

// WriteNextDynamicConfig does what a ZooKeeper 3.9 member does when it
// accepts a reconfig proposal (QuorumPeer.setLastSeenQuorumVerifier with
// writeToDisk): it writes the proposed servers and their version line to
// <static>.dynamic.next, atomically.
func WriteNextDynamicConfig(staticPath string, servers []Server, version int64) error {
	return writeFileAtomic(NextDynamicFileName(staticPath), []byte(FormatQuorumConfig(servers, version)))
}

// RemoveNextDynamicConfig removes <static>.dynamic.next, as ZooKeeper does
// once the configuration it holds is committed; none is not an error.
func RemoveNextDynamicConfig(staticPath string) error {
	if err := os.Remove(NextDynamicFileName(staticPath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// BackupStaticConfig copies the static file to <static>.bak, atomically,
// as ZooKeeper 3.9 does at start-up when reconfigEnabled is set and the
// servers are still in the static file (QuorumPeerConfig.backupOldConfig):
// the first committed reconfiguration rewrites that file.
func BackupStaticConfig(staticPath string) error {
	data, err := os.ReadFile(staticPath)
	if err != nil {
		return err
	}
	return writeFileAtomic(staticPath+".bak", data)
}

// writeFileAtomic replaces path with data (internal/atomicfile).
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o644)
}
