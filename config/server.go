package config

import (
	"fmt"
	"strconv"
	"strings"
)

const serverKeyPrefix = "server."

// parseServerID parses the N of a server.N key as ZooKeeper's QuorumMaj
// does (Long.parseLong of what follows the first dot) and checks it is a
// usable server id.
func parseServerID(key, value string) (int64, error) {
	n := strings.TrimPrefix(key, serverKeyPrefix)
	id, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return 0, &KeyError{Key: key, Value: value, Reason: fmt.Sprintf("server id %q is not a number", n)}
	}
	if id < 1 || id > MaxServerID {
		return 0, &KeyError{Key: key, Value: value, Reason: fmt.Sprintf("server id %d is not between 1 and %d", id, MaxServerID)}
	}
	return id, nil
}

// hostPortString is host:port for messages, an empty host being the
// wildcard address as in ZooKeeper.
func hostPortString(host string, port int) string {
	if host == "" {
		host = "0.0.0.0"
	}
	return bracketHost(host) + ":" + strconv.Itoa(port)
}

const serverLineForm = "want host:quorumPort:electionPort[:participant|:observer][;[clientAddr:]clientPort]"

// parseServerLine parses the value of server.N as QuorumPeer.QuorumServer
// does in ZooKeeper 3.9, minus the multi-address form (host|host, which
// ZooKeeper also rejects unless multiAddress.enabled) and DNS resolution.
// Unlike ZooKeeper it tolerates white space at the ends of the value.
func parseServerLine(key string, id int64, value string) (Server, error) {
	bad := func(reason string) error {
		return &KeyError{Key: key, Value: value, Reason: reason}
	}
	s := Server{ID: id}
	line := javaTrim(value)
	serverClient := javaSplit(line, ";")
	if len(serverClient) == 0 || len(serverClient) > 2 {
		return Server{}, bad(serverLineForm)
	}
	if len(serverClient) == 2 {
		cp, err := hostAndPort(serverClient[1])
		if err != nil || len(cp) == 0 || len(cp) > 2 {
			return Server{}, bad("bad client address; " + serverLineForm)
		}
		if len(cp) == 2 {
			s.ClientAddr = cp[0]
			if s.ClientAddr == "" {
				return Server{}, bad("empty client address")
			}
			if strings.ContainsAny(s.ClientAddr, "[]") {
				return Server{}, bad(fmt.Sprintf("client address %q has a stray bracket", s.ClientAddr))
			}
			if strings.IndexFunc(s.ClientAddr, isSpaceOrControl) >= 0 {
				return Server{}, bad(fmt.Sprintf("client address %q has a space or control character", s.ClientAddr))
			}
		}
		port, err := parsePort(cp[len(cp)-1])
		if err != nil {
			return Server{}, bad("client port: " + err.Error())
		}
		s.ClientPort = port
	}
	if strings.Contains(serverClient[0], "|") {
		return Server{}, bad("multiple addresses (host|host) are not supported")
	}
	parts, err := hostAndPort(serverClient[0])
	if err != nil || len(parts) < 3 || len(parts) > 4 {
		return Server{}, bad(serverLineForm)
	}
	s.Host = parts[0]
	if s.Host == "" {
		return Server{}, bad("empty host")
	}
	// A bracket can only enclose a whole host ([::1]); one inside a host
	// names no address and would not survive being written back.
	if strings.ContainsAny(s.Host, "[]") {
		return Server{}, bad(fmt.Sprintf("host %q has a stray bracket", s.Host))
	}
	// Nor can a space or control character, which no host name or
	// address holds; at the ends of the value javaTrim would drop it when
	// the line is read back, leaving a different host (or none).
	if strings.IndexFunc(s.Host, isSpaceOrControl) >= 0 {
		return Server{}, bad(fmt.Sprintf("host %q has a space or control character", s.Host))
	}
	if s.QuorumPort, err = parsePort(parts[1]); err != nil {
		return Server{}, bad("quorum port: " + err.Error())
	}
	if s.ElectionPort, err = parsePort(parts[2]); err != nil {
		return Server{}, bad("election port: " + err.Error())
	}
	if s.QuorumPort == s.ElectionPort {
		return Server{}, bad("quorum and election ports must differ")
	}
	if len(parts) == 4 {
		switch strings.ToLower(javaTrim(parts[3])) {
		case "observer":
			s.Observer = true
		case "participant":
		default:
			return Server{}, bad(fmt.Sprintf("unrecognised peer type %q (want participant or observer)", parts[3]))
		}
	}
	return s, nil
}

// String formats s as the value of its server.N line.
func (s Server) String() string {
	var sb strings.Builder
	sb.WriteString(bracketHost(s.Host))
	fmt.Fprintf(&sb, ":%d:%d", s.QuorumPort, s.ElectionPort)
	if s.Observer {
		sb.WriteString(":observer")
	}
	if s.ClientPort != 0 {
		sb.WriteByte(';')
		if s.ClientAddr != "" {
			sb.WriteString(bracketHost(s.ClientAddr))
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.Itoa(s.ClientPort))
	}
	return sb.String()
}

// QuorumConfig is the ensemble's configuration as ZooKeeper 3.9 serves it
// in /zookeeper/config (FormatQuorumConfig): the server lines and
// ConfigVersion, 0 for a static configuration. Empty for a standalone
// server.
func (c *Config) QuorumConfig() string {
	if len(c.Servers) == 0 {
		return ""
	}
	return FormatQuorumConfig(c.Servers, c.ConfigVersion)
}

// bracketHost writes h so that hostAndPort reads it back: bracketed if it
// holds a ':' (IPv6) or starts with whitespace, which a properties value
// loses (a host "[ 0]" written bare came back as "0", colliding with
// another server's; FuzzParse).
func bracketHost(h string) string {
	if strings.Contains(h, ":") || strings.TrimLeft(h, " \t\f") != h {
		return "[" + h + "]"
	}
	return h
}

// parsePort is Integer.parseInt plus the range InetSocketAddress accepts,
// minus 0 (an ephemeral port is no use in a config).
func parsePort(s string) (int, error) {
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if p < 1 || p > 65535 {
		return 0, fmt.Errorf("%d is out of range 1-65535", p)
	}
	return int(p), nil
}

// hostAndPort is ZooKeeper's ConfigUtils.getHostAndPort: split s on ':'
// unless it starts with a bracketed IPv6 literal, which stays one part.
func hostAndPort(s string) ([]string, error) {
	if !strings.HasPrefix(s, "[") {
		return javaSplit(s, ":"), nil
	}
	i := strings.IndexByte(s, ']')
	if i < 0 {
		return nil, fmt.Errorf("%q starts with '[' but has no matching ']'", s)
	}
	if i+2 >= len(s) || s[i+1] != ':' {
		return nil, fmt.Errorf("%q has no port after ']:'", s)
	}
	return append([]string{s[1:i]}, javaSplit(s[i+2:], ":")...), nil
}

// javaSplit is String.split with a literal separator: like strings.Split
// but trailing empty strings are dropped (unless sep does not occur at all,
// when the result is s itself).
func javaSplit(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// isSpaceOrControl reports the characters Java's String.trim removes
// (code points up to U+0020) and DEL.
func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }
