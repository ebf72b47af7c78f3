package config

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/corral-db/corral/internal/zktls"
)

// ClientConfig is a ZooKeeper client configuration file, as the Java
// client's ZKClientConfig reads it (zkCli.sh -client-configuration FILE):
// its TLS keys, with or without the zookeeper. prefix.
type ClientConfig struct {
	// Secure is zookeeper.client.secure: connect with TLS.
	Secure bool
	// SSL is the zookeeper.ssl.* keys.
	SSL zktls.Settings
}

// ParseClientConfig reads a client configuration. Keys that do not
// concern corral's client (the socket class, SASL, ...) are returned as
// warnings.
func ParseClientConfig(r io.Reader, logger *slog.Logger) (*ClientConfig, []string, error) {
	props, err := readProperties(r)
	if err != nil {
		return nil, nil, fmt.Errorf("client configuration: %w", err)
	}
	p := newParser(logger, os.ReadFile)
	cc := &ClientConfig{SSL: zktls.Default()}
	for _, pr := range p.dedup(props) {
		key, value := pr.Key, pr.Value
		canon, _ := strings.CutPrefix(key, sysPropPrefix)
		switch {
		case canon == "client.secure":
			err = parseBool(&cc.Secure, key, value)
		case strings.HasPrefix(canon, "ssl.") && !strings.HasPrefix(canon, "ssl.quorum.") && isTLSKey(canon):
			err = p.applySSL(&cc.SSL, key, strings.TrimPrefix(canon, "ssl."), value, pr.Line)
		default:
			p.warn("line %d: %s: ignored", pr.Line, key)
		}
		if err != nil {
			return nil, p.warnings, fmt.Errorf("client configuration: %w", err)
		}
	}
	for dst, pw := range p.filePasswords {
		*dst = pw
	}
	return cc, p.warnings, nil
}
