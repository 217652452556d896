// Command nicdiag_exporter serves nicdiag's joins and verdicts to
// Prometheus: per NIC an info metric with joined labels, each PCIe hop's
// link as trained and as capable, the bandwidth model's ceiling for the
// default workload, the findings of 'nicdiag check' as gauges, and where
// each queue's IRQ lands. One check serves every scrape for --check.ttl.
//
// It has the flags of every Prometheus exporter, from
// prometheus/exporter-toolkit: --web.listen-address, --web.config.file
// (TLS, client certificates, bcrypt basic auth), --web.systemd-socket,
// --web.telemetry-path, --log.level and --log.format. It exits 0 after
// SIGINT or SIGTERM, once the scrapes in flight are answered (5 s at
// most), and 1 when it cannot start.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/exporter/exporterhttp"
	"github.com/nicdiag/nicdiag/option"
)

const (
	name = "nicdiag_exporter"
	// defaultAddress is loopback: the exporter answers on another address
	// only when told to, with TLS and basic auth at hand.
	defaultAddress = "127.0.0.1:9799"
	// shutdownGrace is how long the scrapes in flight get after a signal.
	shutdownGrace = 5 * time.Second
)

const help = `Serves nicdiag's verdicts to Prometheus: per NIC an info metric with joined
labels, each PCIe hop's link as trained and as capable, the bandwidth model's
ceiling for the default workload, the findings of 'nicdiag check' as gauges,
and where each queue's IRQ lands. One check serves every scrape for
--check.ttl; concurrent scrapes share it.

TLS, client certificates and bcrypt basic auth come from --web.config.file
(exporter-toolkit's web configuration format).

Limits: at most 1024 connections (--web.max-connections; past that the
keep-alive connection idle the longest is closed to make room, and one that
has sent nothing is closed at the 5 s header timeout) and 4 scrapes at once
(--web.max-requests; more are answered 503 with Retry-After: 1); a scrape
waits at most 25 s for a check
(then 503). Request headers (and a TLS handshake) within 5 s, the request
within 10 s, headers up to 16 KiB, a request body up to 64 KiB (then 413),
the response written within 10 s once ready; an idle keep-alive connection
is closed after 90 s.

Examples:
  nicdiag_exporter
  nicdiag_exporter --web.listen-address=:9799 --web.config.file=/etc/nicdiag/web.yml
  nicdiag_exporter --root=snapshot.tar.gz --web.listen-address=127.0.0.1:9799`

// options are the command's flags once parsed.
type options struct {
	web         *web.FlagConfig
	path        string
	root        string
	ttl         time.Duration
	maxRequests int
	maxConns    int
	log         *promslog.Config
}

func init() {
	// Release builds may set version.Version with -ldflags; else the
	// module's version from the build info ("(devel)" in a source tree).
	if bi, ok := debug.ReadBuildInfo(); ok && version.Version == "" {
		version.Version = bi.Main.Version
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	stop()
	os.Exit(code)
}

// parse reads the flags. done is set when the command is to exit with
// code without serving: --help, --version, or a usage error (then err
// says what is wrong).
func parse(args []string, stdout io.Writer) (o options, code int, done bool, err error) {
	app := kingpin.New(name, help)
	app.Writer(stdout)
	app.Version(version.Print(name))
	app.HelpFlag.Short('h')
	exited := -1
	app.Terminate(func(c int) { exited = c })
	o.web = kingpinflag.AddFlags(app, defaultAddress)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").
		Default(exporterhttp.DefaultMetricsPath).StringVar(&o.path)
	app.Flag("web.max-requests", "Maximum number of scrapes served at once; more are answered 503 with Retry-After: 1.").
		Default(fmt.Sprint(exporterhttp.DefaultMaxScrapes)).IntVar(&o.maxRequests)
	app.Flag("web.max-connections", "Maximum number of connections open at once; past it, idle keep-alive ones are closed to make room.").
		Default(fmt.Sprint(exporterhttp.DefaultMaxConns)).IntVar(&o.maxConns)
	app.Flag("check.ttl", "How long one check serves scrapes.").
		Default(exporter.DefaultTTL.String()).DurationVar(&o.ttl)
	app.Flag("root", "Read the snapshot at PATH (directory or .tar.gz, from 'nicdiag snapshot') instead of the live host.").
		PlaceHolder("PATH").StringVar(&o.root)
	o.log = &promslog.Config{}
	promslogflag.AddFlags(app, o.log)
	_, err = app.Parse(args)
	switch {
	case exited >= 0:
		return o, exited, true, nil
	case err != nil:
		return o, 1, true, err
	case len(o.path) == 0 || o.path[0] != '/':
		return o, 1, true, fmt.Errorf("--web.telemetry-path %q: want a path starting with /", o.path)
	case o.maxRequests < 1 || o.maxConns < 1:
		return o, 1, true, errors.New("--web.max-requests and --web.max-connections: want 1 or more")
	case o.ttl <= 0:
		return o, 1, true, fmt.Errorf("--check.ttl %v: want more than 0", o.ttl)
	}
	return o, 0, false, nil
}

// run runs the exporter until ctx ends and returns the exit code. ready,
// when not nil, gets the addresses listened on once they are.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- []string) int {
	o, code, done, err := parse(args, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\nsee '%s --help'\n", name, err, name)
	}
	if done {
		return code
	}
	logger := promslog.New(&promslog.Config{Level: o.log.Level, Format: o.log.Format, Writer: stderr})
	logger.Info("Starting "+name, "version", version.Info())
	if err := serve(ctx, o, logger, ready); err != nil {
		logger.Error("Exiting", "err", err)
		return 1
	}
	return 0
}

// serve opens the root and the listeners and serves until ctx ends, then
// shuts down within shutdownGrace.
func serve(ctx context.Context, o options, logger *slog.Logger, ready chan<- []string) error {
	if err := web.Validate(*o.web.WebConfigFile); err != nil {
		return fmt.Errorf("--web.config.file: %w", err)
	}
	root, closeRoot, err := openRoot(ctx, o.root)
	if err != nil {
		return err
	}
	defer closeRoot()
	c := exporter.New(option.Root(root), exporter.WithTTL(o.ttl))
	srv := exporterhttp.NewServer(c, exporterhttp.WithMetricsPath(o.path), exporterhttp.WithMaxScrapes(o.maxRequests),
		exporterhttp.WithMaxConns(o.maxConns), exporterhttp.WithLandingPage(landingPage(o.path, logger)))
	srv.SetErrorLog(slog.NewLogLogger(logger.Handler(), slog.LevelError))
	lns, err := listen(o.web)
	if err != nil {
		return err
	}
	servers := make([]*http.Server, len(lns))
	errc := make(chan error, len(lns))
	var addrs []string
	for i, ln := range lns {
		servers[i] = srv.HTTPServer()
		addrs = append(addrs, ln.Addr().String())
		go func() { errc <- web.Serve(srv.Listener(ln), servers[i], o.web, logger) }()
	}
	if ready != nil {
		ready <- addrs
	}
	select {
	case err := <-errc: // a listener failed, or the TLS configuration
		shutdown(servers, 0)
		return err
	case <-ctx.Done():
	}
	logger.Info("Shutting down")
	shutdown(servers, shutdownGrace)
	for range lns {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return nil
}

// shutdown stops the servers, letting the requests in flight finish for
// grace, then closes whatever is left.
func shutdown(servers []*http.Server, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, s := range servers {
		if s.Shutdown(ctx) != nil {
			s.Close()
		}
	}
}

// landingPage is exporter-toolkit's landing page, linking the metrics.
func landingPage(path string, logger *slog.Logger) http.Handler {
	h, err := web.NewLandingPage(web.LandingConfig{
		Name:        name,
		Description: "NIC, PCIe and IRQ verdicts of nicdiag check for Prometheus",
		Version:     version.Info(),
		Profiling:   "false",
		Links:       []web.LandingLinks{{Address: path, Text: "Metrics"}},
	})
	if err != nil {
		logger.Error("Landing page", "err", err)
		return nil // exporterhttp's own
	}
	return h
}
