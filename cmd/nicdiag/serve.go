package main

import (
	"context"
	"flag"
	"fmt"
)

// serveCmd says where the Prometheus exporter went: nicdiag links no HTTP
// server (TestLinksNoNetHTTP).
var serveCmd = &command{
	name:    "serve",
	summary: "moved: the Prometheus exporter is the nicdiag_exporter program",
	help: `The Prometheus exporter is its own program, nicdiag_exporter (cmd/nicdiag_exporter),
with TLS, basic auth and systemd socket activation; or, with no listening
socket, 'nicdiag check --format prom -o FILE' for node_exporter's textfile
collector. serve only says so, and exits 3.

Examples:
  nicdiag_exporter --web.listen-address=127.0.0.1:9799
  nicdiag check --format prom -o /var/lib/node_exporter/textfile_collector/nicdiag.prom`,
	bind: func(fs *flag.FlagSet) runFunc {
		// The old flags are taken, so an old unit's ExecStart gets the
		// line below rather than a flag error.
		fs.String("listen", "", "ignored: nicdiag_exporter --web.listen-address `ADDR`")
		fs.Duration("ttl", 0, "ignored: nicdiag_exporter --check.ttl")
		return runServe
	},
}

func runServe(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
	fmt.Fprintln(e.stderr, "nicdiag serve: the Prometheus exporter is the nicdiag_exporter program now (go build ./cmd/nicdiag_exporter; see 'nicdiag help serve')")
	return exitFail
}
