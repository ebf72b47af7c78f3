package main

import (
	"log/slog"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on the default mux
)

// startPprof serves Go's profiler for performance work.
func startPprof(addr string) {
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			slog.Warn("pprof server stopped", "err", err)
		}
	}()
}
