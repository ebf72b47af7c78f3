package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/corral-db/corral/console"
)

// runConsole is `corral console`: the web console (package console) on its
// own HTTP listener, for trying it against any ensemble. Its real home is
// the admin server, which mounts the same handler at /console.
func runConsole(args []string) int {
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8081", "HTTP address to serve the console on")
	servers := fs.String("server", "", "client addresses of the ensemble's members, host:port[,host:port...]")
	writable := fs.Bool("writable", false, "allow create, set and delete (admin.console.writable)")
	admins := fs.String("admin", "", "AdminServer addresses of the members, in -server order (empty entries unknown), for leadership transfer")
	durability := fs.String("durability", "", "the ensemble's durability mode, shown on the ensemble page")
	kvEndpoints := fs.String("kv", "", "API addresses of a key-value replica group, host:port[,...], for the Key-value page (admin.console.kvEndpoints)")
	logEndpoints := fs.String("logs", "", "API addresses of the replicated logs, host:port[,...], for the Logs page (admin.console.logEndpoints)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *servers == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: corral console -server host:port[,...] [-listen addr] [-writable]")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	c, err := console.New(console.Config{
		Servers:    strings.Split(*servers, ","),
		AdminAddrs: splitList(*admins),
		Writable:   *writable,
		Durability: *durability,
		Logger:     logger,

		KVEndpoints:  splitList(*kvEndpoints),
		LogEndpoints: splitList(*logEndpoints),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral console:", err)
		return 2
	}
	defer c.Close()
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", c))
	mux.Handle("/{$}", http.RedirectHandler("/console/", http.StatusFound))
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral console:", err)
		return 1
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("console: http://%s/console/\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "corral console:", err)
		return 1
	}
	return 0
}

// splitList splits a comma-separated flag; empty is no entries.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
