package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// refusedSecurityLines are zoo.cfg lines, one per row of
// unimplementedSecurityKeys and more, that must stop start-up.
var refusedSecurityLines = []string{
	"portUnification=true",
	"client.certReload=true",
	"ssl.clientHostnameVerification=true",
	"ssl.quorum.clientHostnameVerification=true",
	"X509AuthenticationProvider.keyStore=x",
	// Garbage in an on/off key is not "off".
	"sslQuorumReloadCertFiles=yes",
	"sslQuorumReloadCertFiles=true",
	"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
	"authProvider=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
	"sasl.serverconfig=Server",
	"sessionRequireClientSASLAuth=true",
	"allowSaslFailedClients=true",
	"superUser=admin",
	"superUser.1=admin",
	"kerberos.removeHostFromPrincipal=true",
	"ensembleAuthName=prod",
	"enforce.auth.enabled=true",
	"enforce.auth.schemes=sasl",
	"IPAuthenticationProvider.usexforwardedfor=true",
	"DigestAuthenticationProvider.enabled=false",
	"DigestAuthenticationProvider.digestAlg=SHA3-256",
	"quorum.auth.enableSasl=true",
	"quorum.auth.serverRequireSasl=true",
	"quorum.auth.learnerRequireSasl=true",
	"quorum.auth.kerberos.servicePrincipal=zkquorum/localhost",
	"quorum.auth.learner.saslLoginContext=QuorumLearner",
	"admin.forceHttps=true",
	"admin.needClientAuth=true",
	"admin.portUnification=true",
}

func TestUnimplementedSecurityKeysStopStartUp(t *testing.T) {
	for _, line := range refusedSecurityLines {
		key, value, _ := strings.Cut(line, "=")
		for _, k := range []string{key, sysPropPrefix + key} {
			in := k + "=" + value
			t.Run(in, func(t *testing.T) {
				_, _, err := parse(t, base+in+"\n")
				if err == nil {
					t.Fatalf("%s: accepted; it must stop start-up", in)
				}
				var ke *KeyError
				if !errors.As(err, &ke) || ke.Key != k || !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s: error %v, want a *KeyError naming %s", in, err, k)
				}
				if !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), "not implemented by corral") {
					t.Errorf("message %q does not name %s and say why", err, k)
				}
			})
		}
	}
}

// Every row of the table is exercised: a row nobody tests is a row whose
// key might be misspelled.
func TestEverySecurityRowRefusesSomething(t *testing.T) {
	for _, row := range unimplementedSecurityKeys {
		found := false
		for _, line := range refusedSecurityLines {
			key, _, _ := strings.Cut(line, "=")
			if key == row.name || (strings.HasSuffix(row.name, ".") && strings.HasPrefix(key, row.name)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("row %q has no line in refusedSecurityLines", row.name)
		}
	}
}

// The values that leave a feature off, or ask only for what corral does,
// are accepted (with the ignored-key warning), in either spelling.
func TestSecurityKeysOffValuesAccepted(t *testing.T) {
	for _, line := range []string{
		"portUnification=false",
		"quorum.auth.enableSasl=false",
		"enforce.auth.enabled=false",
		"sessionRequireClientSASLAuth=false",
		"admin.forceHttps=false",
		"DigestAuthenticationProvider.enabled=true",
		"DigestAuthenticationProvider.digestAlg=SHA1",
		"authProvider.1=org.apache.zookeeper.server.auth.DigestAuthenticationProvider",
		"zookeeper.authProvider.ip=org.apache.zookeeper.server.auth.IPAuthenticationProvider",
	} {
		t.Run(line, func(t *testing.T) {
			c, warnings := mustParse(t, base+line+"\n")
			if len(warnings) != 1 {
				t.Errorf("warnings = %q, want one naming the ignored key", warnings)
			}
			c, _ = mustParse(t, base+"admin.console.kvEndpoints=127.0.0.1:7001, [::1]:7002,\nadmin.console.logEndpoints=h:7100\n")
			if want := []string{"127.0.0.1:7001", "[::1]:7002"}; !reflect.DeepEqual(c.Admin.ConsoleKVEndpoints, want) {
				t.Errorf("admin.console.kvEndpoints = %q, want %q", c.Admin.ConsoleKVEndpoints, want)
			}
			if want := []string{"h:7100"}; !reflect.DeepEqual(c.Admin.ConsoleLogEndpoints, want) {
				t.Errorf("admin.console.logEndpoints = %q, want %q", c.Admin.ConsoleLogEndpoints, want)
			}

			d, _ := mustParse(t, base)
			if c.TickTime != d.TickTime || c.ClientPort != d.ClientPort {
				t.Errorf("config changed: %+v", c)
			}
		})
	}
}

func TestMetricsAndAdminKeys(t *testing.T) {
	c, warnings := mustParse(t, base+
		"metricsProvider.className="+PrometheusMetricsProvider+"\n"+
		"metricsProvider.httpHost=0.0.0.0\nmetricsProvider.httpPort=7001\nmetricsProvider.exportJvmInfo=false\n"+
		"admin.enableServer=true\nzookeeper.admin.serverAddress=[::1]\nadmin.serverPort=9090\n"+
		"admin.commandURL=/cmds/\nadmin.rateLimiterIntervalInMS=1000\nadmin.snapshot.enabled=false\nadmin.restore.enabled=false\n")
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	if !c.Metrics.Enabled() || c.Metrics.ListenAddr() != "0.0.0.0:7001" || c.Metrics.ExportJvmInfo {
		t.Errorf("metrics = %+v (%s)", c.Metrics, c.Metrics.ListenAddr())
	}
	a := c.Admin
	if !a.EnableServer || a.ListenAddr() != "[::1]:9090" || a.CommandURL != "/cmds" || a.RateLimiterIntervalMs != 1000 ||
		a.SnapshotEnabled || a.RestoreEnabled {
		t.Errorf("admin = %+v (%s)", a, a.ListenAddr())
	}

	c, _ = mustParse(t, base+"admin.console.adminAddresses=1=127.0.0.1:8080, 2=[::1]:8081,\n")
	if want := map[int64]string{1: "127.0.0.1:8080", 2: "[::1]:8081"}; !reflect.DeepEqual(c.Admin.ConsoleAdminAddrs, want) {
		t.Errorf("admin.console.adminAddresses = %v, want %v", c.Admin.ConsoleAdminAddrs, want)
	}

	d, _ := mustParse(t, base)
	if d.Metrics.Enabled() || d.Metrics.ListenAddr() != "127.0.0.1:7000" {
		t.Errorf("default metrics = %+v (%s)", d.Metrics, d.Metrics.ListenAddr())
	}
	if !d.Admin.EnableServer || d.Admin.ListenAddr() != "127.0.0.1:8080" || d.Admin.CommandURL != "/commands" {
		t.Errorf("default admin = %+v (%s)", d.Admin, d.Admin.ListenAddr())
	}
	for _, cls := range []string{NullMetricsProvider, DefaultMetricsProvider} {
		if c, _ := mustParse(t, base+"metricsProvider.className="+cls+"\n"); c.Metrics.Enabled() {
			t.Errorf("%s enabled the Prometheus endpoint", cls)
		}
	}
	for _, bad := range []string{
		"metricsProvider.className=com.example.Other",
		"metricsProvider.httpPort=70000",
		"admin.enableServer=yes",
		"admin.serverPort=x",
		"admin.commandURL=commands",
		"admin.rateLimiterIntervalInMS=-1",
		"admin.console.adminAddresses=1:8080",
		"admin.console.adminAddresses=x=h:8080",
		"admin.console.adminAddresses=1=h",
		"admin.console.adminAddresses=1=h:1,1=g:2",
		"admin.console.kvEndpoints=h",
		"admin.console.kvEndpoints=h:1,h:1",
		"admin.console.logEndpoints=h:",
	} {
		key, _, _ := strings.Cut(bad, "=")
		_, _, err := parse(t, base+bad+"\n")
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != key {
			t.Errorf("%s: err = %v, want a *KeyError naming %s", bad, err, key)
		}
	}
}
