package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/testbin"
	"github.com/nicdiag/nicdiag/snapshot"
)

const seed = "../../testdata/snapshots/82576-minipcie-x1"

// exporterRun is the exporter running in-process.
type exporterRun struct {
	addrs  []string
	stderr *testbin.Buffer
	stop   func() int // cancels the run and returns its exit code
}

// start runs the exporter in-process with args (and a loopback port of
// its own unless args name one) until the test ends or stop is called.
func start(t *testing.T, args ...string) *exporterRun {
	t.Helper()
	if !strings.Contains(strings.Join(args, " "), "--web.listen-address") && !strings.Contains(strings.Join(args, " "), "--web.systemd-socket") {
		args = append(args, "--web.listen-address=127.0.0.1:0")
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan []string, 1)
	done := make(chan int, 1)
	r := &exporterRun{stderr: &testbin.Buffer{}}
	go func() { done <- run(ctx, args, io.Discard, r.stderr, ready) }()
	select {
	case r.addrs = <-ready:
	case code := <-done:
		cancel()
		t.Fatalf("the exporter exited %d before listening:\n%s", code, r.stderr.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("the exporter did not listen within 30 s")
	}
	var once sync.Once
	code := -1
	r.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Error("the exporter did not stop within 20 s of its context's end")
			}
		})
		return code
	}
	t.Cleanup(func() { r.stop() })
	return r
}

// durationLine is the check's wall time, which differs from run to run.
var durationLine = regexp.MustCompile(`(?m)^nicdiag_check_duration_seconds \S+$`)

func fetch(t *testing.T, client *http.Client, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// The exporter serves the exporter package's exposition byte for byte (the
// golden file, but the check's wall time), links it from its landing
// page, and exits 0 once its context ends.
func TestServeSnapshot(t *testing.T) {
	r := start(t, "--root", seed)
	client := &http.Client{Timeout: 20 * time.Second}
	base := "http://" + r.addrs[0]
	code, h, body := fetch(t, client, base+"/metrics")
	golden, err := os.ReadFile("../../exporter/testdata/82576-minipcie-x1.prom")
	if err != nil {
		t.Fatal(err)
	}
	if got := durationLine.ReplaceAllString(body, "nicdiag_check_duration_seconds DURATION"); code != 200 || got != string(golden) {
		t.Errorf("GET /metrics: %d, %v; differs from the golden exposition:\n%s", code, h, body)
	}
	if h.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", h.Get("Content-Type"))
	}
	if code, _, body := fetch(t, client, base+"/"); code != 200 || !strings.Contains(body, `href="/metrics"`) || !strings.Contains(body, "nicdiag_exporter") {
		t.Errorf("GET /: %d\n%s", code, body)
	}
	if code := r.stop(); code != 0 {
		t.Errorf("exit %d after the context ended, want 0; log:\n%s", code, r.stderr.String())
	}
	if c, err := net.DialTimeout("tcp", r.addrs[0], time.Second); err == nil {
		c.Close()
		t.Error("still listening after it returned")
	}
}

// --web.telemetry-path moves the exposition; --web.max-requests and
// --check.ttl reach the server and the collector.
func TestFlags(t *testing.T) {
	r := start(t, "--root", seed, "--web.telemetry-path=/nic", "--check.ttl=1h", "--web.max-requests=1", "--log.level=error")
	client := &http.Client{Timeout: 20 * time.Second}
	base := "http://" + r.addrs[0]
	if code, _, body := fetch(t, client, base+"/nic"); code != 200 || !strings.Contains(body, "\nnicdiag_up 1\n") {
		t.Errorf("GET /nic: %d", code)
	}
	if code, _, _ := fetch(t, client, base+"/metrics"); code != 404 {
		t.Errorf("GET /metrics with --web.telemetry-path=/nic: %d, want 404", code)
	}
	if _, _, body := fetch(t, client, base+"/nic"); !strings.Contains(body, "\nnicdiag_checks_total 1\n") {
		t.Error("a second scrape within --check.ttl ran another check")
	}
	if code, _, body := fetch(t, client, base+"/"); code != 200 || !strings.Contains(body, `href="/nic"`) {
		t.Errorf("the landing page does not link /nic: %d\n%s", code, body)
	}
	if s := r.stderr.String(); strings.Contains(s, "level=INFO") {
		t.Errorf("--log.level=error still logs at info:\n%s", s)
	}
}

// Usage errors exit 1 with one line and a pointer to --help; --help and
// --version exit 0 and print to standard output.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown long flag '--bogus'"},
		{[]string{"--web.telemetry-path=metrics"}, `--web.telemetry-path "metrics": want a path starting with /`},
		{[]string{"--web.max-requests=0"}, "want 1 or more"},
		{[]string{"--check.ttl=0s"}, "--check.ttl 0s: want more than 0"},
		{[]string{"extra"}, "unexpected extra"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.args, &stdout, &stderr, nil)
		if code != 1 || !strings.Contains(stderr.String(), c.want) || !strings.HasSuffix(stderr.String(), "see 'nicdiag_exporter --help'\n") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, stderr.String(), c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr, nil); code != 0 ||
		!strings.Contains(stdout.String(), "--web.config.file") || !strings.Contains(stdout.String(), "at most 1024 connections") {
		t.Errorf("--help: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"--version"}, &stdout, &stderr, nil); code != 0 || !strings.HasPrefix(stdout.String(), "nicdiag_exporter, version ") {
		t.Errorf("--version: exit %d %q", code, stdout.String())
	}
}

// What keeps it from starting is an error, logged, and exit 1: a root that
// is not a snapshot, a web configuration that does not load, an address
// already taken.
func TestStartErrors(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	badConfig := filepath.Join(t.TempDir(), "web.yml")
	os.WriteFile(badConfig, []byte("tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--root", t.TempDir()}, "not a snapshot"},
		{[]string{"--root", filepath.Join(t.TempDir(), "gone")}, "no such file or directory"},
		{[]string{"--root", seed, "--web.config.file", badConfig}, "--web.config.file"},
		{[]string{"--root", seed, "--web.config.file", filepath.Join(t.TempDir(), "gone.yml")}, "--web.config.file"},
		{[]string{"--root", seed, "--web.listen-address", taken.Addr().String()}, "address already in use"},
		{[]string{"--root", seed, "--web.systemd-socket"}, "systemd passed no listening socket"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), c.args, io.Discard, &stderr, nil)
		if code != 1 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, log %q; want 1 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// binary builds nicdiag_exporter once, as released: static, without cgo.
func binary(t *testing.T) string {
	t.Helper()
	return filepath.Join(testbin.Build(t, "."), "nicdiag_exporter")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

// waitListening waits for a log line naming the address listened on and
// returns it.
func waitListening(t *testing.T, log *testbin.Buffer) string {
	t.Helper()
	re := regexp.MustCompile(`msg="Listening on" address=(\S+)`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no listening line in 30 s:\n%s", log.String())
	return ""
}

// The process, on SIGTERM or SIGINT, shuts down and exits 0, with the
// snapshot archive it unpacked removed.
func TestSignals(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "host.tar.gz")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.Pack(context.Background(), f, seed); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(binary(t), "--root", archive, "--web.listen-address=127.0.0.1:0")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			log := &testbin.Buffer{}
			cmd.Stderr = log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			addr := waitListening(t, log)
			if code, _, body := fetch(t, &http.Client{Timeout: 20 * time.Second}, "http://"+addr+"/metrics"); code != 200 || !strings.Contains(body, "\nnicdiag_up 1\n") {
				t.Errorf("scrape: %d", code)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) == 0 {
				t.Error("nothing unpacked under TMPDIR")
			}
			start := time.Now()
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if err != nil || time.Since(start) > 10*time.Second {
				t.Errorf("%v: %v after %v; want exit 0\n%s", sig, err, time.Since(start), log.String())
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("left under TMPDIR: %v", ents)
			}
		})
	}
}

// With --web.systemd-socket it serves the socket systemd passes (fd 3,
// LISTEN_FDS and LISTEN_PID as sd_listen_fds(3) says), not an address of
// its own.
func TestSystemdSocket(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the child's copy stays open
	defer lf.Close()
	// sh sets LISTEN_PID to its own pid, which exec keeps.
	cmd := exec.Command("sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@"`, binary(t), "--web.systemd-socket", "--root", seed)
	cmd.ExtraFiles = []*os.File{lf}
	log := &testbin.Buffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("exit: %v\n%s", err, log.String())
		}
	}()
	if got := waitListening(t, log); got != addr {
		t.Errorf("listening on %s, want the passed socket's %s", got, addr)
	}
	if code, _, body := fetch(t, &http.Client{Timeout: 20 * time.Second}, "http://"+addr+"/metrics"); code != 200 || !strings.Contains(body, "\nnicdiag_up 1\n") {
		t.Errorf("scrape on the passed socket: %d", code)
	}
}
