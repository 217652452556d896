package exporterhttp

// What the server's limits do under load, on loopback: idle keep-alive
// connections, connections that send nothing, many scrapers, a client that
// stops reading. The load comes from a child process (this test binary,
// helperEnv set), so /proc/self/fd and the heap of this process are the
// server's.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
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

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/option"
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

// helperCmd is this test binary run as a load client.
func helperCmd(mode, addr string, n int, d time.Duration) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadHelper$", "-test.count=1",
		"-helper.mode="+mode, "-helper.addr="+addr, "-helper.n="+strconv.Itoa(n), "-helper.for="+d.String())
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	return cmd
}

// runHelper runs this test binary as a load client and returns its last
// line of output; it fails the test if the helper fails.
func runHelper(t testing.TB, mode, addr string, n int, d time.Duration) string {
	t.Helper()
	out, err := helperCmd(mode, addr, n, d).CombinedOutput()
	if err != nil {
		t.Fatalf("load helper %s: %v\n%s", mode, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ERRORS ") {
			t.Log(line)
		}
		if strings.HasPrefix(line, "RESULT ") {
			return strings.TrimPrefix(line, "RESULT ")
		}
	}
	t.Fatalf("load helper %s printed no result:\n%s", mode, out)
	return ""
}

// startHelper starts a load client in the background; stop ends it (if it
// still runs) and returns its output.
func startHelper(t testing.TB, mode, addr string, n int, d time.Duration) (stop func() string) {
	t.Helper()
	cmd := helperCmd(mode, addr, n, d)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() string {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		})
		return out.String()
	}
	t.Cleanup(func() { stop() })
	return stop
}

// helperErrs counts the load client's errors by kind; TestLoadHelper
// prints them, and runHelper logs them.
var (
	helperErrsMu sync.Mutex
	helperErrs   = map[string]int{}
)

func noteErr(where string, err error) {
	helperErrsMu.Lock()
	helperErrs[where+": "+err.Error()]++
	helperErrsMu.Unlock()
}

// TestLoadHelper is the load client, run by runHelper; as a test it skips.
func TestLoadHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("the load client for the load tests, run by them")
	}
	var res string
	switch *helperMode {
	case "idle":
		res = idleClients(*helperAddr, *helperN)
	case "scrape":
		res = scrapers(*helperAddr, *helperN, *helperFor)
	case "silent":
		res = silentClients(*helperAddr, *helperN, *helperFor, true)
	case "hold":
		res = silentClients(*helperAddr, *helperN, *helperFor, false)
	default:
		t.Fatalf("unknown mode %q", *helperMode)
	}
	if len(helperErrs) > 0 {
		fmt.Println("ERRORS", helperErrs)
	}
	fmt.Println("RESULT", res)
}

// shedLimit is how many times a load client connects again after the
// server closed its new connection before answering it.
const shedLimit = 5

// isShed reports whether err is a connection closed by the server before
// any answer: at the connection cap the server closes the keep-alive
// connection idle the longest, and a request can cross that close on its
// way in. net/http's client says "server closed idle connection" when that
// happens before it wrote the request.
func isShed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// idleClients opens n connections at once, sends GET / on each, reads the
// response, and then waits (up to 30 s) for the server to close it; a
// connection shed before its answer is opened again, up to shedLimit
// times. It returns "answered A closed C shed S".
func idleClients(addr string, n int) string {
	var answered, closed, shed atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range shedLimit + 1 {
				ok, err := idleClient(addr)
				switch {
				case ok:
					answered.Add(1)
					closed.Add(1)
				case err != nil && isShed(err):
					shed.Add(1)
					continue
				case err != nil:
					noteErr("idle", err)
				default:
					answered.Add(1)
				}
				return
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("answered %d closed %d shed %d", answered.Load(), closed.Load(), shed.Load())
}

// idleClient sends GET / on a new connection and reads the answer (an
// error is that of the request), then waits for the server to close the
// connection: ok when it does.
func idleClient(addr string) (ok bool, err error) {
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return false, fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n"); err != nil {
		return false, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return false, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		return false, fmt.Errorf("answer %d: %v", resp.StatusCode, err)
	}
	// Idle from here on: the server must close it.
	_, err = br.ReadByte()
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), nil
}

// silentClients opens n connections that send nothing and keeps them for
// d; with again, each one the server closes is opened again at once. It
// returns "opened O": the connections it made.
func silentClients(addr string, n int, d time.Duration, again bool) string {
	var opened atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				conn, err := net.DialTimeout("tcp", addr, time.Until(stop))
				if err != nil {
					continue
				}
				opened.Add(1)
				conn.SetDeadline(stop)
				io.Copy(io.Discard, conn) // until the server closes it
				conn.Close()
				if !again {
					time.Sleep(time.Until(stop))
				}
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("opened %d", opened.Load())
}

// scrapers runs n clients that scrape /metrics in a loop for d (each at
// least once), half of them asking for gzip, and returns "ok O busy B other X shed S errors E":
// O complete expositions, B answers 503 with Retry-After: 1, X any other
// answer, S new connections closed before an answer (isShed), E failed
// requests.
func scrapers(addr string, n int, d time.Duration) string {
	var ok, busy, other, shed, errs atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for i := range n {
		tr := &http.Transport{DisableCompression: i%2 == 0, MaxIdleConnsPerHost: 1}
		client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer tr.CloseIdleConnections()
			for first := true; first || time.Now().Before(stop); first = false {
				resp, err := client.Get("http://" + addr + "/metrics")
				if err != nil && isShed(err) {
					shed.Add(1)
					continue
				}
				if err != nil {
					noteErr("get", err)
					errs.Add(1)
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					noteErr("body", err)
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
	return fmt.Sprintf("ok %d busy %d other %d shed %d errors %d", ok.Load(), busy.Load(), other.Load(), shed.Load(), errs.Load())
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

// sampler records the most fds and the largest VmRSS of this process
// every few milliseconds until stop is called.
type sampler struct {
	fds  atomic.Int64
	rss  atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func sample(t *testing.T) *sampler {
	s := &sampler{done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			if n := int64(openFDs(t)); n > s.fds.Load() {
				s.fds.Store(n)
			}
			if r := vmRSS(t); r > s.rss.Load() {
				s.rss.Store(r)
			}
			select {
			case <-s.done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the most fds and VmRSS seen.
func (s *sampler) stop() (fds int, rss uint64) {
	close(s.done)
	s.wg.Wait()
	return int(s.fds.Load()), s.rss.Load()
}

// fdSlack covers the fds this process opens besides the server's
// connections while a test runs: the helper's pipes, /dev/null and pidfd,
// the sampler's own reads of /proc, and the one connection the listener
// holds while it waits for a slot.
const fdSlack = 16

// settle returns this process's VmRSS after a GC that hands freed memory
// back to the system.
func settle(t *testing.T) uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	return vmRSS(t)
}

// waitFDs waits (10 s at most) for this process to hold at most n fds,
// and returns how many it holds.
func waitFDs(t *testing.T, n int) int {
	deadline := time.Now().Add(10 * time.Second)
	for openFDs(t) > n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return openFDs(t)
}

// (a) 5,000 idle keep-alive connections opened at once: the server holds
// at most the default cap of connections (and the fds and memory they
// take), serves every client in turn by closing idle connections while
// others wait, and closes the last ones after the idle timeout.
func TestIdleConnectionsBounded(t *testing.T) {
	rssBound := uint64(48 << 20) // VmRSS during, over before: 1024 connections
	if raceEnabled {
		rssBound *= 8 // the race detector's shadow memory
	}
	n := 5000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Max < uint64(n+200) {
		n = int(lim.Max) - 200
		t.Logf("RLIMIT_NOFILE %d: %d connections", lim.Max, n)
	}
	addr := startServer(t, exporter.New(option.Root(seed)), WithIdleTimeout(time.Second))
	base, rss0 := openFDs(t), settle(t)
	smp := sample(t)
	res := runHelper(t, "idle", addr, n, 0)
	most, rss := smp.stop()
	t.Logf("%d clients: %s; fds: %d before, at most %d during; VmRSS %.1f MiB before, at most %.1f MiB during",
		n, res, base, most, mib(rss0), mib(rss))
	if want := fmt.Sprintf("answered %d closed %d ", n, n); !strings.HasPrefix(res, want) {
		t.Errorf("helper: %s, want %s", res, want)
	}
	if most > base+DefaultMaxConns+fdSlack {
		t.Errorf("the server held up to %d fds for %d idle clients, want at most %d + %d", most, n, base, DefaultMaxConns)
	}
	if rss > rss0+rssBound {
		t.Errorf("VmRSS reached %.1f MiB, %.1f MiB before", mib(rss), mib(rss0))
	}
	if now := waitFDs(t, base+1); now > base+1 {
		t.Errorf("%d fds open after the clients left, %d before", now, base)
	}
}

// (b) 200 clients that connect and send nothing, holding their
// connections: a scraper is still answered, well before Prometheus'
// default scrape timeout of 10 s (the time it takes is
// BenchmarkScrapeSilentConnections'), as the cap leaves room for both; the
// server holds the silent connections and the scraper's, no more.
func TestSilentConnections(t *testing.T) {
	const silent = 200
	addr := startServer(t, exporter.New(option.Root(seed), exporter.WithTTL(time.Hour)), WithReadHeaderTimeout(time.Minute))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	if code, _, _ := get(t, client, "GET", "http://"+addr+"/metrics"); code != 200 {
		t.Fatalf("warm-up scrape: %d", code)
	}
	base := waitFDs(t, openFDs(t))
	smp := sample(t)
	stop := startHelper(t, "hold", addr, silent, 30*time.Second)
	for deadline := time.Now().Add(time.Minute); openFDs(t) < base+silent; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d fds, %d before: the %d silent clients did not connect", openFDs(t), base, silent)
		}
	}
	var took []time.Duration
	for range 5 {
		start := time.Now()
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatalf("scrape with 200 silent clients: %v (after %v)", err, time.Since(start))
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(start))
		if err != nil || resp.StatusCode != 200 || !strings.HasSuffix(string(body), "\nnicdiag_up 1\n") {
			t.Fatalf("scrape with 200 silent clients: %d, %v", resp.StatusCode, err)
		}
	}
	stop()
	most, _ := smp.stop()
	t.Logf("scrapes with %d silent clients took %v; fds %d before, at most %d", silent, took, base, most)
	if most > base+silent+fdSlack+2 {
		t.Errorf("the server held up to %d fds, %d before", most, base)
	}
}

// The time a scrape on a new connection takes while 200 clients hold
// connections that send nothing (hold), or connect again as soon as they
// are closed (silent): TestSilentConnections holds them.
func BenchmarkScrapeSilentConnections(b *testing.B) {
	for _, c := range []struct {
		mode   string
		silent int
	}{{"none", 0}, {"hold", 200}, {"silent", 200}} {
		silent := c.silent
		b.Run(c.mode, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			s := NewServer(exporter.New(option.Root(seed), exporter.WithTTL(time.Hour)))
			s.SetErrorLog(log.New(io.Discard, "", 0))
			hs := s.HTTPServer()
			go hs.Serve(s.Listener(ln))
			defer hs.Close()
			url := "http://" + ln.Addr().String() + "/metrics"
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
			scrape := func() {
				resp, err := client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("scrape: %d", resp.StatusCode)
				}
			}
			scrape()
			if silent > 0 {
				stop := startHelper(b, c.mode, ln.Addr().String(), silent, 10*time.Minute)
				defer stop()
				time.Sleep(time.Second)
			}
			b.ResetTimer()
			for range b.N {
				scrape()
			}
		})
	}
}

// (c) 200 scrapers in a loop for 20 s: every scrape gets the exposition or
// a 503 with Retry-After, none has its connection closed under it (the
// cap leaves room for all), and the server's memory after is what it was
// before, within a bound: the exposition is rendered once per check and
// shared, and scrapes are capped.
func TestManyScrapersMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 200 scrapers for 20 s")
	}
	const (
		heapBound = 8 << 20  // HeapInuse after GC, after vs before
		peakBound = 64 << 20 // HeapInuse during, vs before
		rssBound  = 64 << 20 // VmRSS after FreeOSMemory, after vs before
	)
	addr := startServer(t, exporter.New(option.Root(seed), exporter.WithTTL(time.Second)))
	if res := runHelper(t, "scrape", addr, 1, time.Millisecond); !strings.HasPrefix(res, "ok 1 ") {
		t.Fatalf("warm-up scrape: %s", res)
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	rss0 := settle(t)
	heap0 := heap()
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
	smp := sample(t)
	res := runHelper(t, "scrape", addr, 200, 20*time.Second)
	close(done)
	<-sampled
	most, rssPeak := smp.stop()
	var ok, busy, other, shed, errs int
	if _, err := fmt.Sscanf(res, "ok %d busy %d other %d shed %d errors %d", &ok, &busy, &other, &shed, &errs); err != nil {
		t.Fatalf("helper: %q: %v", res, err)
	}
	waitFDs(t, fds0) // the helper has gone; let the server see its connections close
	rss1 := settle(t)
	heap1 := heap()
	t.Logf("200 scrapers for 20 s: %s; fds at most %d (%d before); HeapInuse %.1f MiB before, %.1f MiB at most during, %.1f MiB after; VmRSS %.1f MiB before, %.1f MiB at most during, %.1f MiB after",
		res, most, fds0, mib(heap0), mib(peak.Load()), mib(heap1), mib(rss0), mib(rssPeak), mib(rss1))
	if ok == 0 || other != 0 || errs != 0 || shed != 0 {
		t.Errorf("scrapes: %s; want every one answered with the exposition or 503 with Retry-After, none shed", res)
	}
	if most > fds0+200+fdSlack {
		t.Errorf("the server held up to %d fds, %d before", most, fds0)
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

// (d) A client that sends a scrape and never reads holds no scrape slot:
// with one slot, other scrapes are answered while its response is stuck,
// and it is disconnected after the write timeout without its whole body.
func TestStalledReaderCut(t *testing.T) {
	const writeTimeout = 2 * time.Second
	// About 17 MB: more than the loopback socket buffers hold.
	r := &nicdiag.Report{Host: &nicdiag.Host{}}
	pad := strings.Repeat("x", 100)
	for i := range 100000 {
		r.Findings = append(r.Findings, finding.Finding{Code: "test.code", Severity: finding.Info, Subject: pad + strconv.Itoa(i)})
	}
	c := exporter.New(exporter.WithTTL(time.Hour), exporter.WithCheck(func(context.Context) (*nicdiag.Report, error) { return r, nil }))
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
