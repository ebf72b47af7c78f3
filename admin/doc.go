// Package admin is what operators and their tools talk to over HTTP:
// ZooKeeper's Prometheus endpoint (metricsProvider.*, /metrics) and its
// AdminServer (admin.*, the JSON commands under /commands), so that
// exporters, dashboards, alerts and Kubernetes probes written for
// ZooKeeper 3.9 work against corral unchanged.
//
// The package reads a server through narrow interfaces (MetricsSource,
// CommandSource) that *server.Server implements; it owns no server state.
// Files:
//
//	metrics.go        the Prometheus registry: ZooKeeper's names and types
//	http.go           HTTPServer, a listener and a mux open to more handlers
//	commands.go       the AdminServer: dispatch, auth, rate limits, JSON
//	command_table.go  each command's names, flags and fields
//	promcheck/        the scrape checks tests use (parser and promlint)
//
// Lock conventions: the AdminServer's only mutable state is the trace
// mask (atomic) and each rate limiter's last event (under its mutex);
// HTTPServer's mux takes handlers at any time (http.ServeMux locks).
package admin
