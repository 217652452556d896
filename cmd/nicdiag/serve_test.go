package main

import (
	"debug/elf"
	"strings"
	"testing"
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
