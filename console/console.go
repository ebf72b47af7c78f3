package console

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

//go:embed static
var staticFS embed.FS

// Config is what the console needs from its host (the admin server).
type Config struct {
	// Servers are the client addresses ("host:port") of the ensemble's
	// members, in member order. The console's sessions connect to them and
	// the ensemble view asks each for its four-letter words.
	Servers []string
	// IDs are the members' server ids (server.N of zoo.cfg), parallel to
	// Servers; nil means 1..len(Servers). Leadership transfer names the
	// new leader by its server id.
	IDs []int64
	// AdminAddrs are the members' AdminServer addresses ("host:port"),
	// parallel to Servers; "" (or a short slice) where unknown. A
	// leadership transfer is asked of the leader's AdminServer, so it is
	// possible only while the leader's address is known.
	AdminAddrs []string
	// Writable allows create, set and delete through the console
	// (admin.console.writable=true). Off, the console is read-only
	// whatever the user's credentials.
	Writable bool
	// Durability is the configured durability mode (sync, async,
	// diskless), shown on the ensemble page; a member whose mntr reports
	// zk_durability overrides it for that member.
	Durability string
	// Metrics samples a member's metrics; nil means mntr over the
	// four-letter-word port (MntrSource).
	Metrics MetricsSource
	// SampleInterval is the period of metric samples (default 1 s) and
	// Window how far back the ring buffer reaches (default 5 min).
	SampleInterval time.Duration
	Window         time.Duration
	// IdleStop stops the sampler after this long without a page asking
	// for metrics (default 15 s).
	IdleStop time.Duration
	// ConnIdle closes a cached client session after this long unused
	// (default 2 min, at least twice RequestTimeout); MaxSessions bounds
	// the cache (default 32).
	ConnIdle    time.Duration
	MaxSessions int
	// RequestTimeout bounds one API call's work (default 10 s).
	RequestTimeout time.Duration
	// KVEndpoints are the API addresses of a key-value replica group's
	// members (admin.console.kvEndpoints); empty hides nothing but the
	// Key-value page says how to set it.
	KVEndpoints []string
	// LogEndpoints are the replicated logs' API addresses
	// (admin.console.logEndpoints), likewise for the Logs page.
	LogEndpoints []string
	// Logger receives the console's diagnostics; nil discards them.
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.SampleInterval <= 0 {
		c.SampleInterval = time.Second
	}
	if c.Window <= 0 {
		c.Window = 5 * time.Minute
	}
	if c.IdleStop <= 0 {
		c.IdleStop = 15 * time.Second
	}
	if c.ConnIdle <= 0 {
		c.ConnIdle = 2 * time.Minute
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 32
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 10 * time.Second
	}
	if c.ConnIdle < 2*c.RequestTimeout {
		// A session in use by a request is never idle that long, so the
		// janitor cannot close one under a request.
		c.ConnIdle = 2 * c.RequestTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = MntrSource{}
	}
}

// Console is the console's http.Handler. Mount it under a prefix with
// http.StripPrefix (the page uses relative URLs), e.g.
//
//	mux.Handle("/console/", http.StripPrefix("/console", c))
//
// and Close it when the admin server stops.
type Console struct {
	cfg      Config
	mux      *http.ServeMux
	sessions *sessionCache
	sampler  *sampler
	kv       *kvConns
	logs     *logConns

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the sampler and the session janitor
}

// New checks cfg and returns the console. It starts no goroutine until a
// page asks for something.
func New(cfg Config) (*Console, error) {
	if len(cfg.Servers) == 0 {
		return nil, errors.New("console: no servers")
	}
	for _, s := range cfg.Servers {
		if s == "" || strings.ContainsAny(s, ", /") {
			return nil, errors.New("console: bad server address " + `"` + s + `"`)
		}
	}
	if cfg.IDs != nil && len(cfg.IDs) != len(cfg.Servers) {
		return nil, errors.New("console: IDs and Servers differ in length")
	}
	if len(cfg.AdminAddrs) > len(cfg.Servers) {
		return nil, errors.New("console: more AdminAddrs than Servers")
	}
	for _, a := range cfg.AdminAddrs {
		if a != "" {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, errors.New("console: bad admin address " + `"` + a + `"`)
			}
		}
	}
	for _, list := range [][]string{cfg.KVEndpoints, cfg.LogEndpoints} {
		for _, a := range list {
			if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
				return nil, errors.New("console: bad endpoint " + `"` + a + `"`)
			}
		}
	}
	cfg.Servers = append([]string(nil), cfg.Servers...)
	cfg.KVEndpoints = append([]string(nil), cfg.KVEndpoints...)
	cfg.LogEndpoints = append([]string(nil), cfg.LogEndpoints...)
	ids := make([]int64, len(cfg.Servers))
	for i := range ids {
		ids[i] = int64(i + 1)
		if cfg.IDs != nil {
			ids[i] = cfg.IDs[i]
		}
	}
	cfg.IDs = ids
	admins := make([]string, len(cfg.Servers))
	copy(admins, cfg.AdminAddrs)
	cfg.AdminAddrs = admins
	cfg.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Console{cfg: cfg, ctx: ctx, cancel: cancel}
	c.sessions = newSessionCache(c)
	c.sampler = newSampler(c)
	c.kv = &kvConns{endpoints: cfg.KVEndpoints}
	c.logs = &logConns{endpoints: cfg.LogEndpoints}
	c.routes()
	return c, nil
}

// Close stops the sampler and closes every client session. The handler
// answers 503 afterwards.
func (c *Console) Close() error {
	c.cancel()
	c.sessions.closeAll()
	c.kv.close()
	c.logs.close()
	c.wg.Wait()
	return nil
}

func (c *Console) routes() {
	c.mux = http.NewServeMux()
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(sub)
	c.mux.Handle("GET /", noCache(files))
	c.mux.HandleFunc("GET /api/info", c.api(c.handleInfo))
	c.mux.HandleFunc("GET /api/whoami", c.api(c.handleWhoAmI))
	c.mux.HandleFunc("GET /api/children", c.api(c.handleChildren))
	c.mux.HandleFunc("GET /api/node", c.api(c.handleNode))
	c.mux.HandleFunc("POST /api/create", c.api(c.writing(c.handleCreate)))
	c.mux.HandleFunc("POST /api/set", c.api(c.writing(c.handleSet)))
	c.mux.HandleFunc("POST /api/delete", c.api(c.writing(c.handleDelete)))
	c.mux.HandleFunc("GET /api/ensemble", c.api(c.handleEnsemble))
	c.mux.HandleFunc("GET /api/sessions", c.api(c.handleSessions))
	c.mux.HandleFunc("GET /api/watches", c.api(c.handleWatches))
	c.mux.HandleFunc("GET /api/metrics", c.api(c.handleMetrics))
	c.mux.HandleFunc("POST /api/transfer", c.api(c.writing(c.handleTransfer)))
	c.mux.HandleFunc("GET /api/kv/group", c.api(c.handleKVGroup))
	c.mux.HandleFunc("GET /api/kv/get", c.api(c.handleKVGet))
	c.mux.HandleFunc("GET /api/kv/scan", c.api(c.handleKVScan))
	c.mux.HandleFunc("GET /api/logs/info", c.api(c.handleLogsInfo))
	c.mux.HandleFunc("GET /api/logs/stat", c.api(c.handleLogsStat))
	c.mux.HandleFunc("GET /api/logs/tail", c.api(c.handleLogsTail))
}

// ServeHTTP serves the page and its API.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c.ctx.Err() != nil {
		http.Error(w, "console closed", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path == "" {
		// Mounted with StripPrefix; the host's ServeMux already sends
		// /console to /console/.
		r.URL.Path = "/"
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
	c.mux.ServeHTTP(w, r)
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}
