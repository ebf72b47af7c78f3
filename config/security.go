package config

import "strings"

// Never weaker than configured. A zoo.cfg that asks ZooKeeper for TLS,
// SASL, Kerberos, x509 client certificates, enforced authentication or any
// other security feature corral does not implement must not start corral
// in plaintext or without the check: the operator would believe the
// ensemble protected when it is not. Each key below stops start-up with a
// *KeyError naming it, unless its value is the one that leaves the feature
// off (sslQuorum=false is a common template line and is not a request for
// anything).
//
// This table is the one place that says which security keys corral lacks.
// Whoever implements a feature deletes its rows here and handles the keys
// in parser.apply.

// securityKey is one row: a key, or every key under a prefix, that asks
// for a security feature corral does not implement.
type securityKey struct {
	// name is the key as ZooKeeper documents it (without the
	// "zookeeper." system-property prefix, which is also matched). A name
	// ending in "." matches every key under it.
	name string
	// feature names what the key turns on, for the error message.
	feature string
	// accepted reports whether value leaves the feature off (or asks only
	// for what corral does), so the key may be ignored; nil accepts
	// nothing.
	accepted func(value string) bool
}

// Value tests for securityKey.accepted.
var (
	onlyFalse = func(v string) bool { return strings.EqualFold(v, "false") }
	onlyTrue  = func(v string) bool { return strings.EqualFold(v, "true") }
)

// corralAuthProviders are the authentication providers corral implements
// (datatree/acl.go): an authProvider.N line naming one of them asks for
// nothing new.
var corralAuthProviders = map[string]bool{
	"org.apache.zookeeper.server.auth.DigestAuthenticationProvider": true,
	"org.apache.zookeeper.server.auth.IPAuthenticationProvider":     true,
}

// unimplementedSecurityKeys are the zoo.cfg keys (ZooKeeper 3.9's
// zookeeperAdmin "Cluster Options", "Encryption, Authentication,
// Authorization Options" and the AdminServer's TLS options) whose feature
// corral does not implement.
var unimplementedSecurityKeys = []securityKey{
	// TLS (config/tls.go handles secureClientPort, client.portUnification,
	// sslQuorum, X509AuthenticationProvider.superUser and the ssl.* and
	// ssl.quorum.* keys it implements before this table is consulted); what
	// is left under these names is not implemented.
	{name: "portUnification", feature: "TLS on the quorum port", accepted: onlyFalse},
	{name: "client.certReload", feature: "TLS certificate reloading", accepted: onlyFalse},
	{name: "ssl.", feature: "TLS (ssl.* and ssl.quorum.* keys)"},
	{name: "sslQuorumReloadCertFiles", feature: "TLS between members", accepted: onlyFalse},
	{name: "X509AuthenticationProvider.", feature: "x509 client-certificate authentication"},

	// Authentication providers other than digest and ip; SASL and Kerberos.
	{name: "authProvider", feature: "an authentication provider", accepted: corralAuthProvider},
	{name: "authProvider.", feature: "an authentication provider", accepted: corralAuthProvider},
	{name: "sasl.", feature: "SASL authentication"},
	{name: "sessionRequireClientSASLAuth", feature: "SASL authentication", accepted: onlyFalse},
	{name: "allowSaslFailedClients", feature: "SASL authentication", accepted: onlyFalse},
	{name: "superUser", feature: "the SASL super user"},
	{name: "superUser.", feature: "the SASL super user"},
	{name: "kerberos.", feature: "Kerberos authentication"},
	{name: "ensembleAuthName", feature: "ensemble-name authentication"},
	{name: "enforce.auth.enabled", feature: "enforced client authentication", accepted: onlyFalse},
	{name: "enforce.auth.schemes", feature: "enforced client authentication"},
	{name: "IPAuthenticationProvider.usexforwardedfor", feature: "X-Forwarded-For client addresses", accepted: onlyFalse},

	// Digest authentication as corral does it: enabled, SHA1.
	{name: "DigestAuthenticationProvider.enabled", feature: "disabling digest authentication", accepted: onlyTrue},
	{name: "DigestAuthenticationProvider.digestAlg", feature: "a digest algorithm other than SHA1",
		accepted: func(v string) bool { return strings.EqualFold(v, "SHA1") || strings.EqualFold(v, "SHA-1") }},

	// Member-to-member SASL (QuorumAuth).
	{name: "quorum.auth.enableSasl", feature: "SASL between members", accepted: onlyFalse},
	{name: "quorum.auth.serverRequireSasl", feature: "SASL between members", accepted: onlyFalse},
	{name: "quorum.auth.learnerRequireSasl", feature: "SASL between members", accepted: onlyFalse},
	{name: "quorum.auth.", feature: "SASL between members"},

	// The AdminServer's HTTPS.
	{name: "admin.forceHttps", feature: "HTTPS for the AdminServer", accepted: onlyFalse},
	{name: "admin.needClientAuth", feature: "HTTPS for the AdminServer", accepted: onlyFalse},
	{name: "admin.portUnification", feature: "HTTPS for the AdminServer", accepted: onlyFalse},
}

func corralAuthProvider(v string) bool { return corralAuthProviders[v] }

// unimplementedSecurity returns a *KeyError if key asks for a security
// feature corral lacks, nil otherwise. Exact names win over prefixes, so
// quorum.auth.enableSasl=false is accepted while other quorum.auth.* keys
// are not.
func unimplementedSecurity(key, value string) error {
	name := key
	if s, ok := strings.CutPrefix(key, sysPropPrefix); ok {
		name = s
	}
	var match *securityKey
	for i := range unimplementedSecurityKeys {
		k := &unimplementedSecurityKeys[i]
		if k.name == name {
			match = k
			break
		}
		if match == nil && strings.HasSuffix(k.name, ".") && strings.HasPrefix(name, k.name) {
			match = k
		}
	}
	if match == nil || (match.accepted != nil && match.accepted(value)) {
		return nil
	}
	return &KeyError{Key: key, Value: value,
		Reason: match.feature + " is not implemented by corral; refusing to start rather than run without it"}
}
