package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/corral-db/corral/internal/zktls"
)

// The TLS keys (docs/design/tls.md). ZooKeeper reads secureClientPort,
// secureClientPortAddress and sslQuorum in QuorumPeerConfig and the rest
// as system properties (zookeeper.<key>); both spellings are accepted.

// x509ProviderClass is ZooKeeper's x509 authentication provider, the only
// authProvider.* class corral implements (in Go).
const x509ProviderClass = "org.apache.zookeeper.server.auth.X509AuthenticationProvider"

// tlsKeys are the keys applyTLS handles besides the ssl.* and
// ssl.quorum.* families.
var tlsKeys = map[string]bool{
	"secureClientPort":                     true,
	"secureClientPortAddress":              true,
	"client.portUnification":               true,
	"sslQuorum":                            true,
	"X509AuthenticationProvider.superUser": true,
	"ssl.authProvider":                     true,
}

// sslSuffixes are the X509Util keys after the ssl. or ssl.quorum. prefix.
var sslSuffixes = map[string]bool{
	"keyStore.location": true, "keyStore.password": true, "keyStore.passwordPath": true, "keyStore.type": true,
	"trustStore.location": true, "trustStore.password": true, "trustStore.passwordPath": true, "trustStore.type": true,
	"protocol": true, "enabledProtocols": true, "ciphersuites": true, "clientAuth": true,
	"hostnameVerification": true, "handshakeDetectionTimeoutMillis": true,
	"crl": true, "ocsp": true, "context.supplier.class": true, "sslProvider": true,
}

// isTLSKey reports whether key (without the zookeeper. prefix) is one
// applyTLS handles.
func isTLSKey(key string) bool {
	if tlsKeys[key] {
		return true
	}
	if s, ok := strings.CutPrefix(key, "ssl.quorum."); ok {
		return sslSuffixes[s]
	}
	if s, ok := strings.CutPrefix(key, "ssl."); ok {
		return sslSuffixes[s]
	}
	return false
}

// applyTLS sets the field of one TLS key; handled is false for keys that
// are not TLS keys (or an authProvider.* naming another class, left to
// the caller).
func (p *parser) applyTLS(key, value string, line int) (handled bool, err error) {
	canon, _ := strings.CutPrefix(key, sysPropPrefix)
	if strings.HasPrefix(canon, "authProvider.") {
		if value != x509ProviderClass {
			return false, nil
		}
		// The x509 provider is what corral does on TLS connections anyway
		// (ZooKeeper registers it itself when secureClientPort is set).
		return true, nil
	}
	if !isTLSKey(canon) {
		return false, nil
	}
	c := p.c
	switch canon {
	case "secureClientPort":
		v, err := parseInt(key, value, 0, 65535)
		c.SecureClientPort = v
		return true, err
	case "secureClientPortAddress":
		return true, setString(&c.SecureClientPortAddress, key, javaTrim(unbracket(value)))
	case "client.portUnification":
		return true, parseBool(&c.PortUnification, key, value)
	case "sslQuorum":
		return true, parseBool(&c.SSLQuorum, key, value)
	case "X509AuthenticationProvider.superUser":
		c.X509SuperUser = value
		return true, nil
	case "ssl.authProvider":
		if value != "x509" {
			return true, &KeyError{Key: key, Value: value, Reason: "only the x509 provider is implemented"}
		}
		return true, nil
	}
	s, suffix := &c.SSL, strings.TrimPrefix(canon, "ssl.")
	if q, ok := strings.CutPrefix(canon, "ssl.quorum."); ok {
		s, suffix = &c.QuorumSSL, q
	}
	return true, p.applySSL(s, key, suffix, value, line)
}

func (p *parser) applySSL(s *zktls.Settings, key, suffix, value string, line int) error {
	switch suffix {
	case "keyStore.location":
		return setString(&s.KeyStoreLocation, key, value)
	case "keyStore.password":
		s.KeyStorePassword = value
	case "keyStore.passwordPath":
		return p.readPassword(&s.KeyStorePassword, key, value)
	case "keyStore.type":
		if _, err := zktls.StoreType(value, ""); err != nil {
			return &KeyError{Key: key, Value: value, Reason: err.Error()}
		}
		s.KeyStoreType = value
	case "trustStore.location":
		return setString(&s.TrustStoreLocation, key, value)
	case "trustStore.password":
		s.TrustStorePassword = value
	case "trustStore.passwordPath":
		return p.readPassword(&s.TrustStorePassword, key, value)
	case "trustStore.type":
		if _, err := zktls.StoreType(value, ""); err != nil {
			return &KeyError{Key: key, Value: value, Reason: err.Error()}
		}
		s.TrustStoreType = value
	case "protocol":
		s.Protocol = value
		if _, err := zktls.Load(zktls.Settings{Protocol: value}); err != nil {
			return &KeyError{Key: key, Value: value, Reason: err.Error()}
		}
	case "enabledProtocols":
		s.EnabledProtocols = splitList(value)
		if _, err := zktls.Load(zktls.Settings{EnabledProtocols: s.EnabledProtocols}); err != nil {
			return &KeyError{Key: key, Value: value, Reason: err.Error()}
		}
	case "ciphersuites":
		s.CipherSuites = splitList(value)
		if _, err := zktls.Load(zktls.Settings{CipherSuites: s.CipherSuites}); err != nil {
			return &KeyError{Key: key, Value: value, Reason: err.Error()}
		}
	case "clientAuth":
		if _, err := zktls.ClientAuthType(value); err != nil {
			return &KeyError{Key: key, Value: value, Reason: "want none, want or need"}
		}
		s.ClientAuth = value
	case "hostnameVerification":
		return parseBool(&s.HostnameVerification, key, value)
	case "handshakeDetectionTimeoutMillis":
		v, err := parseInt(key, value, 1, maxInt32)
		s.HandshakeDetectionTimeoutMs = v
		return err
	case "crl", "ocsp":
		var on bool
		if err := parseBool(&on, key, value); err != nil {
			return err
		}
		if on {
			return &KeyError{Key: key, Value: value, Reason: "certificate revocation checking is not implemented"}
		}
	case "context.supplier.class":
		return &KeyError{Key: key, Value: value, Reason: "a Java SSLContext supplier cannot be loaded; use the key and trust store keys"}
	case "sslProvider":
		p.warn("line %d: %s: ignored: Go's TLS implementation is always used", line, key)
	}
	return nil
}

// readPassword is X509Util.getPasswordFromConfigPropertyOrFile's file
// branch: the file's content is the password (trailing line breaks
// dropped). A passwordPath wins over a password key.
func (p *parser) readPassword(dst *string, key, path string) error {
	if path == "" {
		return &KeyError{Key: key, Value: path, Reason: "empty"}
	}
	b, err := p.readFile(path)
	if err != nil {
		return &KeyError{Key: key, Value: path, Reason: err.Error()}
	}
	p.filePasswords[dst] = strings.TrimRight(string(b), "\r\n")
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = javaTrim(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// finishTLS lets the passwords read from passwordPath files win.
func (p *parser) finishTLS() {
	for dst, pw := range p.filePasswords {
		*dst = pw
	}
}

// validateTLS checks the TLS keys against each other.
func (p *parser) validateTLS() error {
	c := p.c
	if c.SecureClientPortAddress != "" && c.SecureClientPort == 0 {
		return &KeyError{Key: "secureClientPortAddress", Value: c.SecureClientPortAddress, Reason: "set but secureClientPort is not set"}
	}
	if c.SecureClientPort != 0 && c.SSL.KeyStoreLocation == "" {
		return &KeyError{Key: "ssl.keyStore.location", Missing: true, Reason: "not set, and secureClientPort needs the server's certificate"}
	}
	if c.PortUnification && c.SSL.KeyStoreLocation == "" {
		return &KeyError{Key: "ssl.keyStore.location", Missing: true, Reason: "not set, and client.portUnification needs the server's certificate"}
	}
	if c.PortUnification && c.ClientPort == 0 && c.SecureClientPort == 0 {
		return &KeyError{Key: "client.portUnification", Value: "true", Reason: "no client port to unify"}
	}
	if c.SSLQuorum {
		if c.QuorumSSL.KeyStoreLocation == "" {
			return &KeyError{Key: "ssl.quorum.keyStore.location", Missing: true, Reason: "not set, and sslQuorum needs this member's certificate"}
		}
		if c.QuorumSSL.TrustStoreLocation == "" {
			return &KeyError{Key: "ssl.quorum.trustStore.location", Missing: true, Reason: "not set, and sslQuorum needs the members' CA"}
		}
	}
	if c.SecureClientPort != 0 && c.SecureClientPort == c.ClientPort && c.SecureClientPortAddress == c.ClientPortAddress {
		return &KeyError{Key: "secureClientPort", Value: strconv.Itoa(c.SecureClientPort), Reason: "equals clientPort; use client.portUnification=true to serve both on one port"}
	}
	return nil
}

// SecureClientListenAddr is where corral accepts TLS clients:
// secureClientPortAddress:secureClientPort, the host defaulting to
// DefaultClientListenHost (loopback) as for clientPort. "" if
// secureClientPort is not set.
func (c *Config) SecureClientListenAddr() string {
	if c.SecureClientPort == 0 {
		return ""
	}
	host := c.SecureClientPortAddress
	if host == "" {
		host = DefaultClientListenHost
	}
	return net.JoinHostPort(host, strconv.Itoa(c.SecureClientPort))
}

// writeTLS writes the TLS keys that differ from the defaults.
func (c *Config) writeTLS(put func(k, v string)) {
	if c.SecureClientPort != 0 {
		put("secureClientPort", strconv.Itoa(c.SecureClientPort))
	}
	if c.SecureClientPortAddress != "" {
		put("secureClientPortAddress", c.SecureClientPortAddress)
	}
	if c.PortUnification {
		put("client.portUnification", "true")
	}
	if c.SSLQuorum {
		put("sslQuorum", "true")
	}
	if c.X509SuperUser != "" {
		put("X509AuthenticationProvider.superUser", c.X509SuperUser)
	}
	writeSSL(put, "ssl.", c.SSL)
	writeSSL(put, "ssl.quorum.", c.QuorumSSL)
}

func writeSSL(put func(k, v string), prefix string, s zktls.Settings) {
	opt := func(k, v string) {
		if v != "" {
			put(prefix+k, v)
		}
	}
	opt("keyStore.location", s.KeyStoreLocation)
	opt("keyStore.password", s.KeyStorePassword)
	opt("keyStore.type", s.KeyStoreType)
	opt("trustStore.location", s.TrustStoreLocation)
	opt("trustStore.password", s.TrustStorePassword)
	opt("trustStore.type", s.TrustStoreType)
	opt("protocol", s.Protocol)
	opt("enabledProtocols", strings.Join(s.EnabledProtocols, ","))
	opt("ciphersuites", strings.Join(s.CipherSuites, ","))
	opt("clientAuth", s.ClientAuth)
	if !s.HostnameVerification {
		put(prefix+"hostnameVerification", "false")
	}
	if s.HandshakeDetectionTimeoutMs != zktls.DefaultHandshakeDetectionTimeoutMs && s.HandshakeDetectionTimeoutMs != 0 {
		put(prefix+"handshakeDetectionTimeoutMillis", fmt.Sprint(s.HandshakeDetectionTimeoutMs))
	}
}
