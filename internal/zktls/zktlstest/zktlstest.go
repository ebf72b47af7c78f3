// Package zktlstest makes certificates for tests: a CA, certificates it
// signs, and the key and trust store files (PEM, PKCS12, JKS) ZooKeeper's
// ssl.* keys name, written into a test's temporary directory.
package zktlstest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Password protects the PKCS12 and JKS stores the package writes.
const Password = "corral-test"

// CA is a self-signed certificate authority.
type CA struct {
	Cert   *x509.Certificate
	Key    *ecdsa.PrivateKey
	serial int64
}

// Leaf is a certificate signed by a CA, with its key.
type Leaf struct {
	Cert  *x509.Certificate
	Key   *ecdsa.PrivateKey
	Chain []*x509.Certificate // Cert, then the CA
}

// NewCA makes a CA named cn.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"corral tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, serial: 1}
}

// Issue signs a certificate for subject, good for servers and clients,
// valid for 127.0.0.1, ::1 and localhost.
func (ca *CA) Issue(t testing.TB, subject pkix.Name) *Leaf {
	t.Helper()
	return ca.IssueFor(t, subject, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback})
}

// IssueFor signs a certificate for subject valid for the given names and
// addresses.
func (ca *CA) IssueFor(t testing.TB, subject pkix.Name, dns []string, ips []net.IP) *Leaf {
	t.Helper()
	key := newKey(t)
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Leaf{Cert: cert, Key: key, Chain: []*x509.Certificate{cert, ca.Cert}}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Files are a leaf's key store and its CA's trust store in one format.
type Files struct {
	KeyStore, TrustStore string
	Type                 string // PEM, PKCS12 or JKS
	Password             string // "" for PEM
}

// WritePEM writes name.pem (key and chain; the PEM key store) and
// name-trust.pem (the CA) into dir. Also returned separately: the key
// alone and the chain alone, as kazoo's keyfile and certfile want them.
func (l *Leaf) WritePEM(t testing.TB, dir, name string, ca *CA) (f Files, certFile, keyFile string) {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	var chain bytes.Buffer
	for _, c := range l.Chain {
		pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	f = Files{Type: "PEM",
		KeyStore:   write(t, dir, name+".pem", append(append([]byte{}, keyPEM...), chain.Bytes()...)),
		TrustStore: write(t, dir, name+"-trust.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})),
	}
	certFile = write(t, dir, name+"-cert.pem", chain.Bytes())
	keyFile = write(t, dir, name+"-key.pem", keyPEM)
	return f, certFile, keyFile
}

// WritePKCS12 writes name.p12 (key store) and name-trust.p12 (the CA as
// a Java trusted certificate entry) into dir.
func (l *Leaf) WritePKCS12(t testing.TB, dir, name string, ca *CA) Files {
	t.Helper()
	ks, err := pkcs12.Modern.Encode(l.Key, l.Cert, l.Chain[1:], Password)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Cert}, Password)
	if err != nil {
		t.Fatal(err)
	}
	return Files{Type: "PKCS12", Password: Password,
		KeyStore:   write(t, dir, name+".p12", ks),
		TrustStore: write(t, dir, name+"-trust.p12", ts),
	}
}

// WriteJKS writes name.jks and name-trust.jks into dir.
func (l *Leaf) WriteJKS(t testing.TB, dir, name string, ca *CA) Files {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ks := keystore.New()
	var chain []keystore.Certificate
	for _, c := range l.Chain {
		chain = append(chain, keystore.Certificate{Type: "X509", Content: c.Raw})
	}
	if err := ks.SetPrivateKeyEntry("key", keystore.PrivateKeyEntry{CreationTime: now, PrivateKey: keyDER, CertificateChain: chain}, []byte(Password)); err != nil {
		t.Fatal(err)
	}
	ts := keystore.New()
	if err := ts.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{CreationTime: now, Certificate: keystore.Certificate{Type: "X509", Content: ca.Cert.Raw}}); err != nil {
		t.Fatal(err)
	}
	var kb, tb bytes.Buffer
	if err := ks.Store(&kb, []byte(Password)); err != nil {
		t.Fatal(err)
	}
	if err := ts.Store(&tb, []byte(Password)); err != nil {
		t.Fatal(err)
	}
	return Files{Type: "JKS", Password: Password,
		KeyStore:   write(t, dir, name+".jks", kb.Bytes()),
		TrustStore: write(t, dir, name+"-trust.jks", tb.Bytes()),
	}
}

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
