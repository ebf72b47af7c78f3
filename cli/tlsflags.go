package cli

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/zktls"
)

// tlsFlags are the CLI's TLS options: zkCli's -client-configuration (a
// ZKClientConfig file with zookeeper.client.secure and zookeeper.ssl.*),
// or the same settings as flags. The flags override the file.
type tlsFlags struct {
	clientConfig string
	secure       bool
	keyStore     string
	keyStorePass string
	trustStore   string
	trustPass    string
	noHostVerify bool
}

func (f *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.clientConfig, "client-configuration", "", "ZooKeeper client configuration `file` (zookeeper.client.secure, zookeeper.ssl.*)")
	fs.BoolVar(&f.secure, "tls", false, "connect with TLS (the server's secureClientPort)")
	fs.StringVar(&f.keyStore, "tls-keystore", "", "client certificate and key `file` (.pem, .p12, .jks), for x509 authentication")
	fs.StringVar(&f.keyStorePass, "tls-keystore-password", "", "key store `password`")
	fs.StringVar(&f.trustStore, "tls-truststore", "", "trusted CA `file` (.pem, .p12, .jks); default: the system's roots")
	fs.StringVar(&f.trustPass, "tls-truststore-password", "", "trust store `password`")
	fs.BoolVar(&f.noHostVerify, "tls-no-hostname-verification", false, "do not check the server's certificate against its host name")
}

// config is the TLS configuration the flags ask for, nil for plaintext.
func (f *tlsFlags) config(logger *slog.Logger) (*tls.Config, error) {
	secure := f.secure
	s := zktls.Default()
	if f.clientConfig != "" {
		r, err := os.Open(f.clientConfig)
		if err != nil {
			return nil, fmt.Errorf("-client-configuration: %w", err)
		}
		defer r.Close()
		cc, _, err := config.ParseClientConfig(r, logger)
		if err != nil {
			return nil, fmt.Errorf("-client-configuration %s: %w", f.clientConfig, err)
		}
		secure = secure || cc.Secure
		s = cc.SSL
	}
	if f.keyStore != "" {
		s.KeyStoreLocation, s.KeyStorePassword, s.KeyStoreType = f.keyStore, f.keyStorePass, ""
	}
	if f.trustStore != "" {
		s.TrustStoreLocation, s.TrustStorePassword, s.TrustStoreType = f.trustStore, f.trustPass, ""
	}
	if f.noHostVerify {
		s.HostnameVerification = false
	}
	if !secure {
		if f.keyStore != "" || f.trustStore != "" {
			return nil, fmt.Errorf("-tls-keystore and -tls-truststore need -tls (or zookeeper.client.secure=true)")
		}
		return nil, nil
	}
	l, err := zktls.Load(s)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return l.ClientConfig(""), nil
}
