package zktls

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Store file types, as ZooKeeper's KeyStoreFileType names them.
const (
	TypeJKS    = "JKS"
	TypePEM    = "PEM"
	TypePKCS12 = "PKCS12"
)

// StoreType is KeyStoreFileType.fromPropertyValueOrFileName: the type
// named by typ (any case), or, when typ is empty, the one the file's
// extension says (.jks, .pem, .p12 or .pfx).
func StoreType(typ, path string) (string, error) {
	if typ != "" {
		switch t := strings.ToUpper(typ); t {
		case TypeJKS, TypePEM, TypePKCS12:
			return t, nil
		case "BCFKS":
			return "", fmt.Errorf("store type %s (Bouncy Castle FIPS) is not supported; use PEM, PKCS12 or JKS", typ)
		}
		return "", fmt.Errorf("unknown store type %q (want JKS, PEM or PKCS12)", typ)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jks":
		return TypeJKS, nil
	case ".pem":
		return TypePEM, nil
	case ".p12", ".pfx":
		return TypePKCS12, nil
	}
	return "", fmt.Errorf("cannot tell the store type of %s from its extension (.jks, .pem, .p12, .pfx); set the type key", path)
}

// LoadKeyStore reads a key store: one private key and the certificate
// chain that goes with it.
func LoadKeyStore(path, password, typ string) (tls.Certificate, error) {
	t, err := StoreType(typ, path)
	if err != nil {
		return tls.Certificate{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, err
	}
	var key crypto.PrivateKey
	var chain []*x509.Certificate
	switch t {
	case TypePEM:
		key, chain, err = pemKeyStore(data, password)
	case TypePKCS12:
		var leaf *x509.Certificate
		var cas []*x509.Certificate
		key, leaf, cas, err = pkcs12.DecodeChain(data, password)
		if err == nil {
			chain = append([]*x509.Certificate{leaf}, cas...)
		}
	case TypeJKS:
		key, chain, err = jksKeyStore(data, password)
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("key store %s (%s): %w", path, t, err)
	}
	if len(chain) == 0 {
		return tls.Certificate{}, fmt.Errorf("key store %s (%s): no certificate", path, t)
	}
	if !publicKeyMatches(key, chain[0]) {
		return tls.Certificate{}, fmt.Errorf("key store %s (%s): the private key does not belong to the first certificate", path, t)
	}
	c := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, cert := range chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	return c, nil
}

// LoadTrustStore reads a trust store: the certificates whose holders (or
// whose signatures) are trusted.
func LoadTrustStore(path, password, typ string) ([]*x509.Certificate, error) {
	t, err := StoreType(typ, path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	switch t {
	case TypePEM:
		certs, err = pemCertificates(data)
	case TypePKCS12:
		certs, err = pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			// A PKCS12 file made by openssl holds certificates without
			// Java's trusted-certificate attribute, perhaps with a key.
			if _, leaf, cas, err2 := pkcs12.DecodeChain(data, password); err2 == nil {
				certs, err = append([]*x509.Certificate{leaf}, cas...), nil
			}
		}
	case TypeJKS:
		certs, err = jksTrustStore(data, password)
	}
	if err != nil {
		return nil, fmt.Errorf("trust store %s (%s): %w", path, t, err)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("trust store %s (%s): no certificate", path, t)
	}
	return certs, nil
}

// pemKeyStore reads ZooKeeper's PEM key store: a private key and the
// certificates, in any order. Encrypted private keys (the store's
// password) are not supported by Go's standard library; we say so.
func pemKeyStore(data []byte, password string) (crypto.PrivateKey, []*x509.Certificate, error) {
	var key crypto.PrivateKey
	var chain []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch b.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, nil, err
			}
			chain = append(chain, c)
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			if key != nil {
				return nil, nil, errors.New("more than one private key")
			}
			k, err := parsePrivateKey(b)
			if err != nil {
				return nil, nil, err
			}
			key = k
		case "ENCRYPTED PRIVATE KEY":
			return nil, nil, errors.New("encrypted PEM private keys are not supported; store the key unencrypted (file permissions protect it) or use PKCS12")
		}
	}
	if key == nil {
		return nil, nil, errors.New("no private key")
	}
	_ = password // an unencrypted PEM key store needs none; ZooKeeper ignores it then too
	return key, chain, nil
}

func parsePrivateKey(b *pem.Block) (crypto.PrivateKey, error) {
	switch b.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	}
	return x509.ParsePKCS8PrivateKey(b.Bytes)
}

func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// jksKeyStore reads the one private key entry of a JKS key store; its
// password is the store's, as ZooKeeper's KeyManagerFactory.init assumes.
func jksKeyStore(data []byte, password string) (crypto.PrivateKey, []*x509.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return nil, nil, err
	}
	var found []string
	for _, a := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(a) {
			found = append(found, a)
		}
	}
	if len(found) != 1 {
		return nil, nil, fmt.Errorf("want exactly one private key entry, found %d", len(found))
	}
	e, err := ks.GetPrivateKeyEntry(found[0], []byte(password))
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	var chain []*x509.Certificate
	for _, c := range e.CertificateChain {
		cert, err := x509.ParseCertificate(c.Content)
		if err != nil {
			return nil, nil, err
		}
		chain = append(chain, cert)
	}
	return key, chain, nil
}

func jksTrustStore(data []byte, password string) ([]*x509.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, a := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(a) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(a)
		if err != nil {
			return nil, err
		}
		c, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	return certs, nil
}

func publicKeyMatches(key crypto.PrivateKey, cert *x509.Certificate) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	var pub crypto.PublicKey
	switch k := key.(type) {
	case *rsa.PrivateKey:
		pub = &k.PublicKey
	case *ecdsa.PrivateKey:
		pub = &k.PublicKey
	case ed25519.PrivateKey:
		pub = k.Public()
	default:
		return false
	}
	e, ok := pub.(equaler)
	return ok && e.Equal(cert.PublicKey)
}
