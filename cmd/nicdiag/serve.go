package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/nicdiag/nicdiag/exporter"
)

// serveFlags are the serve command's own flags.
type serveFlags struct {
	listen string
	ttl    time.Duration
}

var serveCmd = &command{
	name:       "serve",
	signalEnds: true, // SIGTERM is how it stops: it shuts down within signalGrace and exits 0
	summary:    "Prometheus exposition of the joins and verdicts on /metrics",
	help: `Serves Prometheus metrics on http://ADDR/metrics: per NIC an info metric with
joined labels (iface, pci, driver, chip, numa), each PCIe hop's link as trained
and as capable, the bandwidth model's ceiling for the default workload, the
findings of 'nicdiag check' as gauges, and where each queue's IRQ lands. It
exports what node_exporter lacks, not copies of its counters. A check result
serves scrapes for --ttl; concurrent scrapes share it.

Limits: at most 64 connections (past that the connection idle the longest is
closed to make room) and 4 scrapes at once (more are answered 503 with
Retry-After: 1); a scrape waits at most 25 s for a check (then 503). Request
headers within 5 s, the request within 10 s, the response written within 10 s
once ready; an idle keep-alive connection is closed after 90 s.

Examples:
  nicdiag serve --listen 127.0.0.1:9799
  nicdiag --root snapshot.tar.gz serve --listen 127.0.0.1:9799`,
	bind: func(fs *flag.FlagSet) runFunc {
		f := &serveFlags{}
		fs.StringVar(&f.listen, "listen", "127.0.0.1:9799", "`address` to listen on")
		fs.DurationVar(&f.ttl, "ttl", exporter.DefaultTTL, "how long one check serves scrapes")
		return func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
			return runServe(ctx, e, fs, args, *f)
		}
	},
}

func runServe(ctx context.Context, e *env, fs *flag.FlagSet, args []string, f serveFlags) int {
	if len(args) != 0 {
		return e.usageError("serve", fmt.Sprintf("unexpected argument %q", args[0]))
	}
	root, err := e.openRoot(ctx)
	if err != nil {
		return e.fail(err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return e.fail(err)
	}
	c := exporter.New(exporter.WithRoot(root), exporter.WithTTL(f.ttl))
	if e.json {
		e.writeJSON(map[string]string{"schema": jsonSchema, "listening": "http://" + ln.Addr().String() + "/metrics"})
	} else {
		fmt.Fprintf(e.stdout, "serving metrics on http://%s/metrics\n", ln.Addr())
	}
	// The exporter's defaults: timeouts, and caps on connections and
	// scrapes, so a slow or idle client holds no scrape slot or connection
	// for long. Scrapes in flight at SIGTERM get 1 s, inside the 1.5 s the
	// process gives any command after a signal, so serve still exits 0.
	if err := exporter.Serve(ctx, ln, c, exporter.WithShutdownGrace(time.Second)); err != nil {
		return e.fail(err)
	}
	return exitOK
}
