package flw

import (
	"regexp"
	"strings"
	"testing"
)

// envKeys is ZooKeeper 3.9.3's Environment.list order.
var envKeys = []string{
	"zookeeper.version", "host.name", "java.version", "java.vendor", "java.home",
	"java.class.path", "java.library.path", "java.io.tmpdir", "java.compiler",
	"os.name", "os.arch", "os.version", "user.name", "user.home", "user.dir",
	"os.memory.free", "os.memory.max", "os.memory.total",
}

func TestDefaultEnv(t *testing.T) {
	const version = "3.9.3-corral-0.1.0, built on 2026-11-22 02:00 UTC"
	env := DefaultEnv(version)
	if len(env) != len(envKeys) {
		t.Fatalf("%d entries, want %d: %v", len(env), len(envKeys), env)
	}
	memory := regexp.MustCompile(`^\d+MB$`)
	for i, kv := range env {
		if kv.Key != envKeys[i] {
			t.Errorf("entry %d is %q, want %q", i, kv.Key, envKeys[i])
		}
		if kv.Value == "" || strings.Contains(kv.Value, "\n") {
			t.Errorf("%s=%q: empty or multi-line", kv.Key, kv.Value)
		}
		if strings.HasPrefix(kv.Key, "os.memory.") && !memory.MatchString(kv.Value) {
			t.Errorf("%s=%q, want <n>MB", kv.Key, kv.Value)
		}
	}

	// kazoo's server_version: split envi lines on the first "=", take
	// zookeeper.version and match leading digits and dots.
	out := string(Render("envi", &State{Env: env}, nil))
	if !strings.HasPrefix(out, "Environment:\nzookeeper.version="+version+"\n") {
		t.Fatalf("envi starts %q", out[:min(len(out), 80)])
	}
	var got string
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "zookeeper.version" {
			got = regexp.MustCompile(`^\d+\.\d+(\.\d+)*`).FindString(strings.TrimSpace(v))
		}
	}
	if got != "3.9.3" {
		t.Errorf("kazoo-style version parse = %q, want 3.9.3", got)
	}
}

func TestDefaultMetricNames(t *testing.T) {
	names := DefaultMetricNames()
	if names[0] != "version" || names[1] != "server_state" {
		t.Errorf("version and server_state come first: %v", names[:2])
	}
	// PROTOCOL §14.2's list, all present, none with the zk_ prefix.
	for _, want := range strings.Fields(`version server_state avg_latency max_latency
		min_latency packets_received packets_sent num_alive_connections
		outstanding_requests znode_count watch_count ephemerals_count
		approximate_data_size open_file_descriptor_count max_file_descriptor_count
		uptime global_sessions local_sessions connection_drop_probability
		last_client_response_size max_client_response_size min_client_response_size
		outstanding_tls_handshake auth_failed_count non_mtls_remote_conn_count
		non_mtls_local_conn_count`) {
		found := 0
		for _, n := range names {
			if n == want {
				found++
			}
		}
		if found != 1 {
			t.Errorf("%q listed %d times", want, found)
		}
	}
	for _, n := range append(names, LeaderMetricNames()...) {
		if strings.HasPrefix(n, "zk_") {
			t.Errorf("%q carries the zk_ prefix", n)
		}
	}
}
