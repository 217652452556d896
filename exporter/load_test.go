package exporter

// What the server's limits do under load, on loopback: idle keep-alive
// connections, many scrapers, a client that stops reading, a client that
// holds idle connections at the cap. The load comes from a child process
// (this test binary, helperEnv set), so /proc/self/fd and the heap of this
// process are the server's.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// helperEnv, set, makes TestLoadHelper the client named by the helper
// flags instead of a test.
const helperEnv = "NICDIAG_EXPORTER_LOAD_HELPER"

var (
	helperMode = flag.String("helper.mode", "", "load helper: idle or scrape")
	helperAddr = flag.String("helper.addr", "", "load helper: server address")
	helperN    = flag.Int("helper.n", 0, "load helper: connections (idle) or scrapers (scrape)")
	helperFor  = flag.Duration("helper.for", 0, "load helper: how long the scrapers run")
)

// runHelper runs this test binary as a load client and returns its last
// line of output; it fails the test if the helper fails.
func runHelper(t *testing.T, mode, addr string, n int, d time.Duration) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadHelper$", "-test.count=1",
		"-helper.mode="+mode, "-helper.addr="+addr, "-helper.n="+strconv.Itoa(n), "-helper.for="+d.String())
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("load helper %s: %v\n%s", mode, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "RESULT ") {
			return strings.TrimPrefix(line, "RESULT ")
		}
	}
	t.Fatalf("load helper %s printed no result:\n%s", mode, out)
	return ""
}

// TestLoadHelper is the load client, run by runHelper; as a test it skips.
func TestLoadHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("the load client for the load tests, run by them")
	}
	switch *helperMode {
	case "idle":
		fmt.Println("RESULT", idleClients(*helperAddr, *helperN))
	case "scrape":
		fmt.Println("RESULT", scrapers(*helperAddr, *helperN, *helperFor))
	default:
		t.Fatalf("unknown mode %q", *helperMode)
	}
}

// idleClients opens n connections at once, sends GET / on each, reads the
// response, and then waits (up to 30 s) for the server to close it. It
// returns "answered A closed C".
func idleClients(addr string, n int) string {
	var answered, closed atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
			if err != nil {
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n"); err != nil {
				return
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				return
			}
			answered.Add(1)
			// Idle from here on: the server must close it.
			if _, err := br.ReadByte(); errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
				closed.Add(1)
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("answered %d closed %d", answered.Load(), closed.Load())
}

// scrapers runs n clients that scrape /metrics in a loop for d, half of
// them asking for gzip, and returns "ok O busy B other X errors E": O
// complete expositions, B answers 503 with Retry-After: 1, X any other
// answer, E failed requests.
func scrapers(addr string, n int, d time.Duration) string {
	var ok, busy, other, errs atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for i := range n {
		tr := &http.Transport{DisableCompression: i%2 == 0, MaxIdleConnsPerHost: 1}
		client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer tr.CloseIdleConnections()
			for time.Now().Before(stop) {
				resp, err := client.Get("http://" + addr + "/metrics")
				if err != nil {
					errs.Add(1)
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					errs.Add(1)
				case resp.StatusCode == 200 && strings.HasSuffix(string(body), "\nnicdiag_up 1\n"):
					ok.Add(1)
				case resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "1":
					busy.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("ok %d busy %d other %d errors %d", ok.Load(), busy.Load(), other.Load(), errs.Load())
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// vmRSS returns this process's resident set, in bytes.
func vmRSS(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// sampleFDs counts open fds every few milliseconds until stop is called,
// which returns the most seen.
func sampleFDs(t *testing.T) (stop func() int) {
	var most atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if n := int64(openFDs(t)); n > most.Load() {
				most.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		return int(most.Load())
	}
}

// fdSlack covers the fds this process opens besides the server's
// connections while a test runs: the helper's pipes, /proc/self/fd itself,
// and the one connection Serve holds while it waits for a slot.
const fdSlack = 8

// (a) Many idle keep-alive connections: the server holds at most the cap
// (however many clients connect at once), serves every client in turn by
// closing the connection idle the longest when a new one waits, and closes
// the last idle ones after the idle timeout.
func TestIdleConnectionsBounded(t *testing.T) {
	const maxConns = 32
	n := 2000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Max < uint64(n+200) {
		n = int(lim.Max) - 200
		t.Logf("RLIMIT_NOFILE %d: %d connections", lim.Max, n)
	}
	addr := startServer(t, New(WithRoot(seed)), WithMaxConns(maxConns), WithIdleTimeout(time.Second))
	base := openFDs(t)
	stop := sampleFDs(t)
	res := runHelper(t, "idle", addr, n, 0)
	most := stop()
	t.Logf("%d clients: %s; fds: %d before, at most %d during", n, res, base, most)
	if want := fmt.Sprintf("answered %d closed %d", n, n); res != want {
		t.Errorf("helper: %s, want %s", res, want)
	}
	if most > base+maxConns+fdSlack {
		t.Errorf("the server held up to %d fds for %d idle clients, want at most %d + %d", most, n, base, maxConns)
	}
	// The helper has gone: nothing is left open on the server.
	deadline := time.Now().Add(10 * time.Second)
	for openFDs(t) > base+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if now := openFDs(t); now > base+1 {
		t.Errorf("%d fds open after the clients left, %d before", now, base)
	}
}

// At the connection cap, a new client is served at once: the connection
// idle the longest is closed for it, well before the idle timeout.
func TestConnCapClosesOldestIdle(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed)), WithMaxConns(2), WithIdleTimeout(time.Minute))
	var idle []*bufio.Reader
	for range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		idle = append(idle, br)
		time.Sleep(20 * time.Millisecond) // the first is idle the longest
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("a third client at the cap of 2 with 2 idle connections: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("third client: %d", resp.StatusCode)
	}
	if _, err := idle[0].ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the oldest idle connection: %v, want EOF", err)
	}
}

// (b) 200 scrapers in a loop for a few seconds: every scrape gets the
// exposition or a 503 with Retry-After, and the server's memory after is
// what it was before, within a bound: the exposition is rendered once per
// check and shared, and connections and scrapes are capped.
func TestManyScrapersMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 200 scrapers for 4 s")
	}
	const (
		heapBound = 8 << 20  // HeapInuse after GC, after vs before
		peakBound = 64 << 20 // HeapInuse during, vs before
		rssBound  = 64 << 20 // VmRSS after FreeOSMemory, after vs before
	)
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Second)))
	if res := runHelper(t, "scrape", addr, 1, time.Millisecond); !strings.HasPrefix(res, "ok 1 ") {
		t.Fatalf("warm-up scrape: %s", res)
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	settle := func() (uint64, uint64) {
		runtime.GC()
		debug.FreeOSMemory()
		return heap(), vmRSS(t)
	}
	heap0, rss0 := settle()
	fds0 := openFDs(t)
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if h := heap(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	res := runHelper(t, "scrape", addr, 200, 4*time.Second)
	close(done)
	<-sampled
	var ok, busy, other, errs int
	if _, err := fmt.Sscanf(res, "ok %d busy %d other %d errors %d", &ok, &busy, &other, &errs); err != nil {
		t.Fatalf("helper: %q: %v", res, err)
	}
	// The helper has gone; let the server see its connections close.
	for deadline := time.Now().Add(10 * time.Second); openFDs(t) > fds0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	heap1, rss1 := settle()
	t.Logf("200 scrapers for 4 s: %s; HeapInuse %.1f MiB before, %.1f MiB at most during, %.1f MiB after; VmRSS %.1f MiB before, %.1f MiB after",
		res, mib(heap0), mib(peak.Load()), mib(heap1), mib(rss0), mib(rss1))
	if ok == 0 || other != 0 || errs != 0 {
		t.Errorf("scrapes: %s; want every one answered with the exposition or 503 with Retry-After", res)
	}
	if heap1 > heap0+heapBound {
		t.Errorf("HeapInuse %.1f MiB after, %.1f MiB before: more than %.0f MiB kept", mib(heap1), mib(heap0), mib(heapBound))
	}
	if peak.Load() > heap0+peakBound {
		t.Errorf("HeapInuse reached %.1f MiB during, %.1f MiB before", mib(peak.Load()), mib(heap0))
	}
	if rss1 > rss0+rssBound {
		t.Errorf("VmRSS %.1f MiB after, %.1f MiB before", mib(rss1), mib(rss0))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// (c) A client that sends a scrape and never reads holds no scrape slot:
// with one slot, other scrapes are answered while its response is stuck,
// and it is disconnected after the write timeout without its whole body.
func TestStalledReaderCut(t *testing.T) {
	const writeTimeout = 2 * time.Second
	c := New(WithTTL(time.Hour))
	c.build = func(context.Context, string) (*snapshotMetrics, error) {
		// About 17 MB: more than the loopback socket buffers hold.
		var m snapshotMetrics
		pad := strings.Repeat("x", 100)
		for i := range 100000 {
			m.samples = append(m.samples, sample{f: famFinding, values: []string{"test.code", "info", pad + strconv.Itoa(i)}, v: 1})
		}
		return &m, nil
	}
	addr := startServer(t, c, WithMaxScrapes(1), WithWriteTimeout(writeTimeout))
	client := &http.Client{Timeout: 60 * time.Second} // the first HEAD renders 17 MB: slow under -race on a loaded machine
	head := func() (int, int64) {
		req, _ := http.NewRequest("HEAD", "http://"+addr+"/metrics", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.ContentLength
	}
	code, size := head() // runs the check
	if code != 200 || size < 15e6 {
		t.Fatalf("HEAD: %d, Content-Length %d", code, size)
	}

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := io.WriteString(slow, "GET /metrics HTTP/1.1\r\nHost: nicdiag\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(300 * time.Millisecond) // the server is now stuck writing to it
	for i := range 5 {
		if code, _ := head(); code != 200 {
			t.Fatalf("scrape %d while a reader stalls: %d, want 200 (the stalled one holds the only slot?)", i, code)
		}
	}
	if time.Since(start) < writeTimeout {
		time.Sleep(writeTimeout - time.Since(start))
	}
	time.Sleep(500 * time.Millisecond)
	// Now read: what the server sent before it gave up, then the end.
	slow.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.Copy(io.Discard, slow)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the stalled connection is still open after %v", time.Since(start))
	}
	if got >= size {
		t.Errorf("the stalled reader got %d bytes, the whole body (%d): it was not cut", got, size)
	}
	t.Logf("stalled reader cut after %d of %d bytes (%v)", got, size, err)
	if code, _ := head(); code != 200 {
		t.Errorf("scrape after the stalled reader: %d", code)
	}
}
