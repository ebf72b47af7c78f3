package zktls

// Settings are the keys of one X509Util prefix: ssl.* for the client port
// and the clients, ssl.quorum.* for member-to-member traffic. Field names
// follow the keys; "" means unset.
type Settings struct {
	KeyStoreLocation string // ssl.keyStore.location
	KeyStorePassword string // ssl.keyStore.password (or the file ssl.keyStore.passwordPath names)
	KeyStoreType     string // ssl.keyStore.type: JKS, PEM, PKCS12; "" infers it from the extension

	TrustStoreLocation string // ssl.trustStore.location
	TrustStorePassword string // ssl.trustStore.password (or ssl.trustStore.passwordPath)
	TrustStoreType     string // ssl.trustStore.type

	// Protocol is ssl.protocol: TLSv1.3 (ZooKeeper 3.9's default where the
	// JVM has it), TLSv1.2, TLSv1.1, TLSv1 or TLS.
	Protocol string
	// EnabledProtocols is ssl.enabledProtocols; empty means what Protocol
	// implies (TLSv1.3 enables TLSv1.3 and TLSv1.2; any other only itself).
	EnabledProtocols []string
	// CipherSuites is ssl.ciphersuites in IANA (= Java) names; empty means
	// Go's default list (see docs/design/tls.md).
	CipherSuites []string
	// ClientAuth is ssl.clientAuth: none, want or need; "" is need, as in
	// ZooKeeper.
	ClientAuth string
	// HostnameVerification is ssl.hostnameVerification (default true): a
	// client checks the server's certificate against the host it dialled;
	// on the quorum, the accepting member also checks the dialling
	// member's certificate against its address (QuorumX509Util).
	HostnameVerification bool
	// HandshakeDetectionTimeoutMs is ssl.handshakeDetectionTimeoutMillis,
	// how long port unification waits for a client's first byte; default
	// 5000.
	HandshakeDetectionTimeoutMs int
}

// Default is ZooKeeper's defaults for one prefix.
func Default() Settings {
	return Settings{HostnameVerification: true, HandshakeDetectionTimeoutMs: DefaultHandshakeDetectionTimeoutMs}
}

// DefaultHandshakeDetectionTimeoutMs is X509Util's
// DEFAULT_HANDSHAKE_DETECTION_TIMEOUT_MILLIS.
const DefaultHandshakeDetectionTimeoutMs = 5000

// DefaultProtocol is X509Util.DEFAULT_PROTOCOL on a JVM with TLS 1.3.
const DefaultProtocol = "TLSv1.3"
