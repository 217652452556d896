package main

import (
	"debug/elf"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/testbin"
)

// serve says, in one line, where the exporter is, whatever flags an old
// unit passes it, and fails.
func TestServeMoved(t *testing.T) {
	for _, args := range [][]string{{"serve"}, {"serve", "--listen", "127.0.0.1:9799"}, {"--root", snaps + "82576-minipcie-x1", "serve", "--ttl", "1m"}} {
		stdout, stderr, code := runCLI(t, args...)
		if code != exitFail || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "nicdiag_exporter") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

// The flags serve still takes name their nicdiag_exporter counterparts,
// and each is a flag nicdiag_exporter --help lists.
func TestServeFlagsNameTheExporters(t *testing.T) {
	help, err := exec.Command(filepath.Join(testbin.Build(t, "../nicdiag_exporter"), "nicdiag_exporter"), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("nicdiag_exporter --help: %v\n%s", err, help)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serveCmd.bind(fs)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		_, named, ok := strings.Cut(f.Usage, "nicdiag_exporter ")
		if !ok {
			t.Errorf("serve --%s: usage %q names no nicdiag_exporter flag", f.Name, f.Usage)
			return
		}
		n++
		if name := strings.Fields(named)[0]; !strings.Contains(string(help), name+"=") {
			t.Errorf("serve --%s points to %s, which nicdiag_exporter --help does not list", f.Name, name)
		}
	})
	if n == 0 {
		t.Error("serve takes no flags")
	}
}

// nicdiag links no HTTP server: net/http and crypto/tls (with x509,
// http2's hpack and their package inits) would cost every command's
// start-up; the exporter that serves HTTP is nicdiag_exporter. The
// exporter package is linked (check --format prom). Init functions would
// be in the symbol table if the packages were linked.
func TestLinksNoNetHTTP(t *testing.T) {
	f, err := elf.Open(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("no symbol table: %v", err)
	}
	linked := func(pkg string) bool {
		for _, s := range syms {
			if strings.HasPrefix(s.Name, pkg+".") {
				return true
			}
		}
		return false
	}
	if !linked("github.com/nicdiag/nicdiag/exporter") || !linked("net") {
		t.Fatalf("the symbol table lacks the exporter or net: it cannot tell what is linked")
	}
	for _, pkg := range []string{"net/http", "crypto/tls", "crypto/x509", "vendor/golang.org/x/net/http2/hpack", "net/textproto", "mime",
		"github.com/nicdiag/nicdiag/exporter/exporterhttp", "github.com/prometheus/exporter-toolkit/web", "github.com/prometheus/client_golang/prometheus"} {
		if linked(pkg) {
			t.Errorf("%s is linked into nicdiag", pkg)
		}
	}
}
