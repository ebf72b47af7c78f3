package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/server"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/wire"
)

// CommandSource is what the AdminServer reads from and does to a server;
// *server.Server implements it (server/adminapi.go).
type CommandSource interface {
	MetricsSource
	FourLetterState(word string) *flw.State
	Serving() bool
	ResetStats()
	ResetConnectionStats()
	Zab() (server.ZabView, bool)
	LastZxid() int64
	LastSnapshot() (zxid int64, modified time.Time, ok bool)
	AdminAuthorized(scheme, auth, ip, path string, perm int32) (authenticated, authorized bool)
	WriteSnapshotFile(dir string) (path string, zxid int64, err error)
	RestoreSnapshot(r io.Reader) (zxid int64, err error)
	TransferLeadership(to uint64) error
}

// AdminOptions configure an AdminServer.
type AdminOptions struct {
	// Config is the server's configuration (configuration, voting_view,
	// leader); CommandURL, the rate limit and the snapshot and restore
	// switches come from its admin.* keys.
	Config *config.Config
	// InitialConfig is the zoo.cfg text the server started from
	// (initial_configuration).
	InitialConfig string
	// SnapshotDir is where the snapshot command writes the file it
	// streams (and removes); default os.TempDir.
	SnapshotDir string
	Logger      *slog.Logger
	// Now is the clock of the rate limiter; default time.Now.
	Now func() time.Time
}

// AdminServer answers ZooKeeper 3.9.3's AdminServer commands
// (org.apache.zookeeper.server.admin.Commands): GET <commandURL>/<name>
// with the command's primary name or an alias, a JSON object with the
// command's fields plus "command" and "error". POST carries restore's
// body. <commandURL> alone lists the commands as links.
type AdminServer struct {
	src  CommandSource
	opts AdminOptions
	log  *slog.Logger

	byName    map[string]*command
	primaries []string

	// traceMask is get_trace_mask's and set_trace_mask's value
	// (ZooTrace's text trace level); corral traces nothing by it.
	traceMask atomic.Int64

	snapLimit, restoreLimit rateLimiter
}

// command is one AdminServer command: its names (the first is primary),
// whether it needs a serving server, whether it needs the caller to hold
// every permission on "/" (snapshot, restore), and what it does.
type command struct {
	names          []string
	serverRequired bool
	auth           bool
	post           bool // restore: runs on POST
	run            func(a *AdminServer, r *http.Request, resp *response)
}

// response is ZooKeeper's CommandResponse.
type response struct {
	command string
	err     any // nil or a string
	status  int
	data    map[string]any
	headers map[string]string
	// stream, if set, is sent as the body instead of the JSON (snapshot).
	stream     io.ReadCloser
	streamSize int64
}

func (r *response) put(k string, v any) { r.data[k] = v }

// NewAdminServer returns the AdminServer of src.
func NewAdminServer(src CommandSource, opts AdminOptions) *AdminServer {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SnapshotDir == "" {
		opts.SnapshotDir = os.TempDir()
	}
	if opts.Config == nil {
		opts.Config = config.Default()
	}
	a := &AdminServer{src: src, opts: opts, log: opts.Logger, byName: map[string]*command{}}
	a.traceMask.Store(306) // ZooTrace's default text trace level
	interval := time.Duration(opts.Config.Admin.RateLimiterIntervalMs) * time.Millisecond
	a.snapLimit = rateLimiter{interval: interval, now: opts.Now}
	a.restoreLimit = rateLimiter{interval: interval, now: opts.Now}
	for _, c := range commandTable {
		for _, n := range c.names {
			a.byName[n] = c
		}
		a.primaries = append(a.primaries, c.names[0])
	}
	sort.Strings(a.primaries)
	reg := src.Metrics()
	reg.Counter("snapshot_rate_limited_count", "Snapshot commands refused by the rate limiter")
	reg.Counter("snapshot_error_count", "Snapshot commands that failed")
	reg.Counter("restore_rate_limited_count", "Restore commands refused by the rate limiter")
	reg.Counter("restore_error_count", "Restore commands that failed")
	return a
}

// CommandURL is where the commands are served (admin.commandURL).
func (a *AdminServer) CommandURL() string { return a.opts.Config.Admin.CommandURL }

// Mount adds the AdminServer's handlers to h.
func (a *AdminServer) Mount(h *HTTPServer) {
	u := a.CommandURL()
	h.Handle(u, a)
	h.Handle(u+"/", a)
}

// Commands are the primary names, sorted.
func (a *AdminServer) Commands() []string { return append([]string(nil), a.primaries...) }

// ServeHTTP runs the command the URL names.
func (a *AdminServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, a.CommandURL()), "/")
	if name == "" {
		a.listCommands(w)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		http.Error(w, "use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	resp := a.run(name, r)
	for k, v := range resp.headers {
		w.Header().Set(k, v)
	}
	if resp.stream != nil {
		defer resp.stream.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(resp.streamSize, 10))
		w.WriteHeader(resp.status)
		if _, err := io.Copy(w, resp.stream); err != nil {
			a.log.Warn("admin: streaming a snapshot failed", "err", err)
		}
		return
	}
	out := make(map[string]any, len(resp.data)+2)
	for k, v := range resp.data {
		out[k] = v
	}
	out["command"] = resp.command
	if _, ok := out["error"]; !ok || resp.err != nil {
		out["error"] = resp.err
	}
	body, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.status)
	w.Write(body)
}

// listCommands is JettyAdminServer's answer to the bare command URL.
func (a *AdminServer) listCommands(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	for _, n := range a.primaries {
		fmt.Fprintf(w, "<a href=\"%s/%s\">%s</a>\n<br/>\n", a.CommandURL(), n, n)
	}
}

// run is Commands.runCommand.
func (a *AdminServer) run(name string, r *http.Request) *response {
	resp := &response{command: name, status: http.StatusOK, data: map[string]any{}}
	c := a.byName[name]
	if c == nil {
		resp.err = "Unknown command: " + name
		return resp
	}
	resp.command = c.names[0]
	if c.serverRequired && !a.src.Serving() {
		resp.err = "This ZooKeeper instance is not currently serving requests"
		return resp
	}
	if c.auth {
		info := r.Header.Get("Authorization")
		if info == "" {
			resp.status, resp.err = http.StatusUnauthorized, "Auth info is missing for the command"
			return resp
		}
		scheme, auth, _ := strings.Cut(info, " ")
		if strings.Count(info, " ") > 1 {
			resp.status, resp.err = http.StatusUnauthorized, "Not authenticated"
			return resp
		}
		authn, authz := a.src.AdminAuthorized(scheme, auth, clientIP(r), "/", wire.PermAll)
		switch {
		case !authn:
			resp.status, resp.err = http.StatusUnauthorized, "Not authenticated"
			return resp
		case !authz:
			resp.status, resp.err = http.StatusForbidden, "Not authorized"
			return resp
		}
	}
	if c.post != (r.Method == http.MethodPost) {
		resp.status = http.StatusMethodNotAllowed
		resp.err = fmt.Sprintf("%s does not accept %s", resp.command, r.Method)
		return resp
	}
	c.run(a, r, resp)
	return resp
}

// clientIP is the HTTP client's address, as IPAuthenticationProvider
// reads it (without X-Forwarded-For, which corral does not honour).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// javaDouble is a float64 that JSON prints as Jackson prints a Java
// double: always with a fraction or exponent (0.0, not 0), so a client
// sees the type ZooKeeper's answer has.
type javaDouble float64

func (d javaDouble) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(float64(d))
	if err == nil && !strings.ContainsAny(string(b), ".eE") {
		b = append(b, '.', '0')
	}
	return b, err
}

// jsonValue adapts an mntr value for JSON: floating-point values as
// javaDouble.
func jsonValue(v any) any {
	switch x := v.(type) {
	case float64:
		return javaDouble(x)
	case float32:
		return javaDouble(x)
	}
	return v
}

// rateLimiter allows one event per interval (ZooKeeper's RateLimiter
// with one permit).
type rateLimiter struct {
	interval time.Duration
	now      func() time.Time
	mu       sync.Mutex
	last     time.Time
}

func (l *rateLimiter) allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < l.interval {
		return false
	}
	l.last = now
	return true
}
