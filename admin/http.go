package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// HTTPServer is one HTTP listener with a mux that more handlers may join
// (the metrics endpoint, the AdminServer's commands, later the web
// console at /console). TRACE is refused, as ZooKeeper's Jetty
// constrains it.
type HTTPServer struct {
	name string
	log  *slog.Logger
	mux  *http.ServeMux
	srv  *http.Server
	ln   net.Listener
}

// NewHTTPServer returns a server called name (for logs) whose idle
// connections close after idle (admin.idleTimeout).
func NewHTTPServer(name string, idle time.Duration, log *slog.Logger) *HTTPServer {
	if log == nil {
		log = slog.Default()
	}
	h := &HTTPServer{name: name, log: log, mux: http.NewServeMux()}
	h.srv = &http.Server{
		Handler:           http.HandlerFunc(h.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return h
}

// Handle adds a handler, as http.ServeMux.Handle.
func (h *HTTPServer) Handle(pattern string, handler http.Handler) { h.mux.Handle(pattern, handler) }

func (h *HTTPServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodTrace {
		http.Error(w, "TRACE is not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Listen binds addr (host:port).
func (h *HTTPServer) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", h.name, addr, err)
	}
	h.ln = ln
	return nil
}

// Addr is the bound address (nil before Listen).
func (h *HTTPServer) Addr() net.Addr {
	if h.ln == nil {
		return nil
	}
	return h.ln.Addr()
}

// Serve serves until ctx ends, then closes the listener and every
// connection (a graceful shutdown of up to a second first).
func (h *HTTPServer) Serve(ctx context.Context) error {
	if h.ln == nil {
		return fmt.Errorf("%s: Serve before Listen", h.name)
	}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := h.srv.Shutdown(sctx); err != nil {
			h.srv.Close()
		}
	})
	defer stop()
	h.log.Info(h.name+" listening", "addr", h.ln.Addr().String())
	err := h.srv.Serve(h.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
