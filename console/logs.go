package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/rlogclient"
)

// The Logs page: the positions of the replicated logs the page names
// (the Logs API has no call listing every log, so the page keeps the
// names its user added) and a tail of one: its last KiBs of committed
// bytes, re-read while the page is open. Read-only, through rlogclient
// against admin.console.logEndpoints.

// maxTailKiB bounds a tail the page asks for; maxStatNames the logs one
// stat request names.
const (
	maxTailKiB   = 1024
	maxStatNames = 100
)

// logConns holds the console's client of the logs' endpoints.
type logConns struct {
	endpoints []string

	mu     sync.Mutex
	client *rlogclient.Client // guarded by mu; nil until first use
	closed bool               // guarded by mu
}

func (l *logConns) get() (*rlogclient.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errors.New("console closed")
	}
	if l.client == nil {
		c, err := rlogclient.Dial(l.endpoints)
		if err != nil {
			return nil, err
		}
		l.client = c
	}
	return l.client, nil
}

func (l *logConns) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.client != nil {
		l.client.Close()
		l.client = nil
	}
}

type logStatJSON struct {
	Name      string `json:"name"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Committed int64  `json:"committed"`
	Sealed    bool   `json:"sealed"`
	Size      int64  `json:"size"` // committed - start: the readable bytes
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
}

func logStatOf(s rlogclient.Stat) logStatJSON {
	return logStatJSON{Name: s.Name, Start: s.Start, End: s.End, Committed: s.Committed, Sealed: s.Sealed,
		Size: s.Committed - s.Start}
}

func (c *Console) logsConfigured() error {
	if len(c.cfg.LogEndpoints) == 0 {
		return &apiError{Status: http.StatusNotFound, Code: "NOTCONFIGURED",
			Message: "no log endpoints (set admin.console.logEndpoints=host:port,...)"}
	}
	return nil
}

// handleLogsInfo: GET api/logs/info: the endpoints, or that none are set.
func (c *Console) handleLogsInfo(cl *call) (any, error) {
	return map[string]any{"configured": len(c.cfg.LogEndpoints) > 0, "endpoints": append([]string{}, c.cfg.LogEndpoints...)}, nil
}

// handleLogsStat: GET api/logs/stat?names=a,b,...: each log's positions,
// or why not (a log that does not exist is reported, not an error).
func (c *Console) handleLogsStat(cl *call) (any, error) {
	if err := c.logsConfigured(); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(cl.r.URL.Query().Get("names"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) > maxStatNames {
		return nil, badRequest("at most " + strconv.Itoa(maxStatNames) + " names")
	}
	lc, err := c.logs.get()
	if err != nil {
		return nil, err
	}
	out := make([]logStatJSON, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := lc.Stat(cl.ctx, n)
			if err != nil {
				out[i] = logStatJSON{Name: n, Error: err.Error(), Code: toAPIError(err).Code}
				return
			}
			out[i] = logStatOf(s)
		}()
	}
	wg.Wait()
	return map[string]any{"logs": out}, nil
}

// handleLogsTail: GET api/logs/tail?name=L[&kib=N]: the last N KiB
// (default 4) of the log's committed bytes.
func (c *Console) handleLogsTail(cl *call) (any, error) {
	if err := c.logsConfigured(); err != nil {
		return nil, err
	}
	q := cl.r.URL.Query()
	name := q.Get("name")
	if name == "" {
		return nil, badRequest("name is required")
	}
	kib := 4
	if s := q.Get("kib"); s != "" {
		var err error
		kib, err = strconv.Atoi(s)
		if err != nil || kib < 1 || kib > maxTailKiB {
			return nil, badRequest("kib must be 1.." + strconv.Itoa(maxTailKiB))
		}
	}
	lc, err := c.logs.get()
	if err != nil {
		return nil, err
	}
	want := int64(kib) << 10
	// The read answers with the positions; a trim between the stat and
	// the read moves the start up, so retry once from the new start.
	var data []byte
	var from int64
	var st rlogclient.Stat
	for attempt := 0; ; attempt++ {
		st, err = lc.Stat(cl.ctx, name)
		if err != nil {
			return nil, err
		}
		from = max(st.Start, st.Committed-want)
		data = data[:0]
		off := from
		for off < st.Committed {
			var b []byte
			var next int64
			b, next, _, err = lc.Read(cl.ctx, name, off, st.Committed-off, 0)
			if err != nil || next <= off {
				break
			}
			data = append(data, b...)
			off = next
		}
		if err == nil || !errors.Is(err, rlog.ErrTruncated) || attempt > 0 {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"stat": logStatOf(st), "offset": from, "data": data}, nil
}
