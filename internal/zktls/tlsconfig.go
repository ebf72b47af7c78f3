package zktls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// Loaded is Settings with its stores read and its names resolved: what
// X509Util's SSLContextAndOptions holds.
type Loaded struct {
	Settings Settings
	// Cert is the key store's key and chain; nil without a key store.
	Cert *tls.Certificate
	// Roots is the trust store; nil without one, which means the system's
	// roots, as a JVM falls back to its cacerts.
	Roots *x509.CertPool

	minVersion, maxVersion uint16
	suites                 []uint16
	clientAuth             tls.ClientAuthType
}

// Load reads the stores s names and checks its other keys.
func Load(s Settings) (*Loaded, error) {
	l := &Loaded{Settings: s}
	var err error
	if l.minVersion, l.maxVersion, err = versions(s.Protocol, s.EnabledProtocols); err != nil {
		return nil, err
	}
	if l.suites, err = cipherSuites(s.CipherSuites, &l.minVersion, l.maxVersion); err != nil {
		return nil, err
	}
	if l.clientAuth, err = ClientAuthType(s.ClientAuth); err != nil {
		return nil, err
	}
	if s.KeyStoreLocation != "" {
		c, err := LoadKeyStore(s.KeyStoreLocation, s.KeyStorePassword, s.KeyStoreType)
		if err != nil {
			return nil, err
		}
		l.Cert = &c
	}
	if s.TrustStoreLocation != "" {
		certs, err := LoadTrustStore(s.TrustStoreLocation, s.TrustStorePassword, s.TrustStoreType)
		if err != nil {
			return nil, err
		}
		l.Roots = x509.NewCertPool()
		for _, c := range certs {
			l.Roots.AddCert(c)
		}
	}
	return l, nil
}

// ClientAuthType is X509Util.ClientAuth.fromPropertyValue: none, want or
// need in any case; "" is need.
func ClientAuthType(v string) (tls.ClientAuthType, error) {
	switch strings.ToUpper(v) {
	case "", "NEED":
		return tls.RequireAndVerifyClientCert, nil
	case "WANT":
		return tls.VerifyClientCertIfGiven, nil
	case "NONE":
		return tls.NoClientCert, nil
	}
	return 0, fmt.Errorf("clientAuth %q: want none, want or need", v)
}

var protocolVersions = map[string]uint16{
	"TLSv1":   tls.VersionTLS10,
	"TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12,
	"TLSv1.3": tls.VersionTLS13,
}

// versions resolves ssl.protocol and ssl.enabledProtocols to the range of
// TLS versions to offer, as SSLContextAndOptions.getEnabledProtocols does.
// Go configures a range, so the enabled versions must be contiguous.
func versions(protocol string, enabled []string) (lo, hi uint16, err error) {
	if protocol == "" {
		protocol = DefaultProtocol
	}
	var set []uint16
	if len(enabled) == 0 {
		switch protocol {
		case "TLS":
			set = []uint16{tls.VersionTLS12, tls.VersionTLS13}
		case "TLSv1.3":
			set = []uint16{tls.VersionTLS13, tls.VersionTLS12}
		default:
			v, ok := protocolVersions[protocol]
			if !ok {
				return 0, 0, fmt.Errorf("protocol %q: want TLSv1.3, TLSv1.2, TLSv1.1, TLSv1 or TLS", protocol)
			}
			set = []uint16{v}
		}
	} else {
		if _, ok := protocolVersions[protocol]; !ok && protocol != "TLS" {
			return 0, 0, fmt.Errorf("protocol %q: want TLSv1.3, TLSv1.2, TLSv1.1, TLSv1 or TLS", protocol)
		}
		for _, p := range enabled {
			v, ok := protocolVersions[p]
			if !ok {
				return 0, 0, fmt.Errorf("enabledProtocols: %q: want TLSv1.3, TLSv1.2, TLSv1.1 or TLSv1", p)
			}
			set = append(set, v)
		}
	}
	lo, hi = slices.Min(set), slices.Max(set)
	for v := lo; v <= hi; v++ {
		if !slices.Contains(set, v) {
			return 0, 0, fmt.Errorf("enabledProtocols %v: the versions must be contiguous (no gap)", enabled)
		}
	}
	return lo, hi, nil
}

// cipherSuites resolves ssl.ciphersuites. TLS 1.3's suites cannot be
// chosen in Go (all three are always on); naming only them restricts the
// connection to TLS 1.3.
func cipherSuites(names []string, lo *uint16, hi uint16) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	byName := map[string]*tls.CipherSuite{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[cs.Name] = cs
	}
	var ids []uint16
	only13 := true
	for _, n := range names {
		cs, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("ciphersuites: unknown or unsupported suite %q", n)
		}
		if slices.Equal(cs.SupportedVersions, []uint16{tls.VersionTLS13}) {
			continue
		}
		only13 = false
		ids = append(ids, cs.ID)
	}
	if only13 {
		if hi < tls.VersionTLS13 {
			return nil, errors.New("ciphersuites: only TLS 1.3 suites, but TLS 1.3 is not enabled")
		}
		*lo = tls.VersionTLS13
	}
	return ids, nil
}

func (l *Loaded) base() *tls.Config {
	c := &tls.Config{
		MinVersion:   l.minVersion,
		MaxVersion:   l.maxVersion,
		CipherSuites: l.suites,
	}
	if l.Cert != nil {
		c.Certificates = []tls.Certificate{*l.Cert}
	}
	return c
}

// ServerConfig is the configuration of an accepting socket: the key
// store's certificate, client certificates per ssl.clientAuth checked
// against the trust store, and, if verifyClientHost (the quorum, with
// hostname verification on), the client's certificate checked against its
// IP address as ZKTrustManager does.
func (l *Loaded) ServerConfig(verifyClientHost bool) (*tls.Config, error) {
	if l.Cert == nil {
		return nil, errors.New("keyStore.location is not set: a server needs a certificate")
	}
	c := l.base()
	c.ClientAuth = l.clientAuth
	c.ClientCAs = l.Roots
	if verifyClientHost {
		base := c.Clone()
		c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			cc := base.Clone()
			remote := hello.Conn.RemoteAddr()
			cc.VerifyConnection = func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return nil // ClientAuth decided already whether that is fine
				}
				host, _, err := net.SplitHostPort(remote.String())
				if err != nil {
					return err
				}
				return checkClientHost(cs.PeerCertificates[0], host)
			}
			return cc, nil
		}
	}
	return c, nil
}

// ClientConfig is the configuration of a dialling socket to host (a name
// or an IP address): the trust store checks the server's certificate,
// and its host name too unless hostname verification is off; the key
// store, if any, is offered as the client certificate.
func (l *Loaded) ClientConfig(host string) *tls.Config {
	c := l.base()
	c.RootCAs = l.Roots
	c.ServerName = host
	if !l.Settings.HostnameVerification {
		// Verify the chain but not the name: Go verifies both or neither.
		roots := l.Roots
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs.PeerCertificates, roots, x509.ExtKeyUsageServerAuth)
		}
	}
	return c
}

// reverseLookupTimeout bounds the reverse DNS lookup of a client's
// address during its handshake.
const reverseLookupTimeout = 2 * time.Second

// checkClientHost is ZKTrustManager's client host check: the
// certificate must name the client's IP address or, failing that, a name
// its address resolves back to.
func checkClientHost(cert *x509.Certificate, ip string) error {
	err := cert.VerifyHostname(ip)
	if err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), reverseLookupTimeout)
	defer cancel()
	names, lerr := net.DefaultResolver.LookupAddr(ctx, ip)
	if lerr != nil {
		return err
	}
	for _, n := range names {
		if cert.VerifyHostname(strings.TrimSuffix(n, ".")) == nil {
			return nil
		}
	}
	return err
}

func verifyChain(certs []*x509.Certificate, roots *x509.CertPool, usage x509.ExtKeyUsage) error {
	if len(certs) == 0 {
		return errors.New("tls: the peer sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}
