package main

import (
	"bufio"
	"context"
	"debug/elf"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/exporter"
)

// The serve command answers a scrape over loopback and stops on cancel.
func TestServeScrapeAndStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--root", snaps + "82576-minipcie-x1", "serve", "--listen", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url := strings.TrimSpace(strings.TrimPrefix(line, "serving metrics on "))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `nicdiag_finding{code="pcie.bottleneck"`) {
		t.Errorf("scrape lacks the bottleneck finding:\n%s", body)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("serve exited %d after cancel, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

// The limits the serve help states are the exporter's defaults.
func TestServeHelpStatesLimits(t *testing.T) {
	help, _, _ := runCLI(t, "help", "serve")
	help = strings.Join(strings.Fields(help), " ")
	secs := func(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + " s" }
	for _, want := range []string{
		"at most " + strconv.Itoa(exporter.DefaultMaxConns) + " connections",
		strconv.Itoa(exporter.DefaultMaxScrapes) + " scrapes at once",
		"503 with Retry-After: 1",
		"waits at most " + secs(exporter.DefaultScrapeTimeout),
		"headers within " + secs(exporter.DefaultReadHeaderTimeout),
		"request within " + secs(exporter.DefaultReadTimeout),
		"written within " + secs(exporter.DefaultWriteTimeout),
		"closed after " + secs(exporter.DefaultIdleTimeout),
	} {
		if !strings.Contains(help, want) {
			t.Errorf("serve help lacks %q:\n%s", want, help)
		}
	}
}

// serve's HTTP server is the exporter's own, so net/http and crypto/tls
// (with x509, http2's hpack and their package inits) are not linked: no
// command pays their start-up (issue #17). Their init functions would be in
// the symbol table if they were.
func TestServeLinksNoNetHTTP(t *testing.T) {
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
	for _, pkg := range []string{"net/http", "crypto/tls", "crypto/x509", "vendor/golang.org/x/net/http2/hpack", "net/textproto", "mime"} {
		if linked(pkg) {
			t.Errorf("%s is linked into nicdiag", pkg)
		}
	}
}
