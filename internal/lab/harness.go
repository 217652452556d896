// Package lab boots a throw-away QEMU guest (Debian's 6.1 kernel, a busybox
// initramfs, emulated PCIe NICs behind root ports whose link we choose) and
// runs a script in it, so that nicdiag can be tested against real drivers,
// real sysfs, real MSI-X vectors and real softirqs.
//
// The guest is built by build.sh into a cache directory outside the source
// tree, which the caller names (Harness.CacheDir); Harness.Run boots it
// through run.sh. Both need root (unshare -n, apt-get download) and take
// seconds, so the tests in this package run only when NICDIAG_LAB=1 (the
// tests, not this package, read the environment).
package lab

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dir returns the internal/lab directory of the source tree (where build.sh,
// run.sh, guest/ and topologies/ live).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Harness boots guests built into one cache directory.
type Harness struct {
	// CacheDir is where build.sh keeps its downloads and the built guest,
	// and where run.sh boots it from; build.sh creates it. It must be set:
	// the harness has no default of its own. build.sh and run.sh get it as
	// NICDIAG_LAB_CACHE, whatever the caller's environment says; run by
	// hand they fall back to $XDG_CACHE_HOME/nicdiag-lab, then
	// /var/tmp/nicdiag-lab (see README.md).
	CacheDir string
}

// cache returns h.CacheDir made absolute, or an error when it is unset.
func (h Harness) cache() (string, error) {
	if h.CacheDir == "" {
		return "", errors.New("lab: Harness.CacheDir is not set")
	}
	return filepath.Abs(h.CacheDir)
}

// script returns a command running the shell script name (build.sh, run.sh)
// of Dir() on h's cache.
func (h Harness) script(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	c, err := h.cache()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(Dir(), name), args...)
	cmd.Env = append(cmd.Environ(), "NICDIAG_LAB_CACHE="+c)
	return cmd, nil
}

// inputsStamp is the cache file that names the build inputs the guest was
// built from (inputsHash), so that a guest built by an older build.sh or
// guest/ (fewer kernel modules, another init) is rebuilt, not booted.
const inputsStamp = "guest.inputs"

// inputsHash is the SHA-256 of build.sh and the files of guest/, in name
// order: what the initramfs is made of besides the downloads.
func inputsHash() (string, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "guest", "*"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range append([]string{filepath.Join(Dir(), "build.sh")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Built reports whether h's cache holds a bootable guest built from this
// tree's build.sh and guest/ (its stamp, written by EnsureBuilt, matches).
func (h Harness) Built() bool {
	c, err := h.cache()
	if err != nil {
		return false
	}
	for _, f := range []string{"vmlinux", "initramfs.cpio", "qemu/usr/bin/qemu-system-x86_64", "busybox/bin/busybox"} {
		if _, err := os.Stat(filepath.Join(c, f)); err != nil {
			return false
		}
	}
	stamp, err := os.ReadFile(filepath.Join(c, inputsStamp))
	want, herr := inputsHash()
	return err == nil && herr == nil && strings.TrimSpace(string(stamp)) == want
}

// EnsureBuilt runs build.sh when h's cache has no guest yet, or one built
// from other inputs (see Built), writing its progress to log (which may be
// nil). build.sh is idempotent, so a partial cache is completed rather than
// refetched.
func (h Harness) EnsureBuilt(ctx context.Context, log io.Writer) error {
	if h.Built() {
		return nil
	}
	if log == nil {
		log = io.Discard
	}
	cmd, err := h.script(ctx, "build.sh")
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("lab: build.sh: %w", err)
	}
	sum, err := inputsHash()
	if err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	c, _ := h.cache() // script succeeded, so it is set
	if err := os.WriteFile(filepath.Join(c, inputsStamp), []byte(sum+"\n"), 0o644); err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	if !h.Built() {
		return fmt.Errorf("lab: build.sh finished but %s has no guest image", h.CacheDir)
	}
	return nil
}

// BuildNicdiag compiles a static nicdiag (CGO_ENABLED=0, so it runs in the
// busybox guest) from the module that contains this package, into
// dir/nicdiag, and returns its path.
func BuildNicdiag(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "nicdiag")
	// By import path from inside the module, so that it does not matter how
	// deep in the tree this package sits.
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/nicdiag/nicdiag/cmd/nicdiag")
	cmd.Dir = Dir()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("lab: building nicdiag: %w\n%s", err, b)
	}
	return out, nil
}

// Config is one boot.
type Config struct {
	// Topology names a file in internal/lab/topologies ("links", "igb",
	// "traffic", "none") or is a path to one.
	Topology string
	// Script is bash run in the guest as /lab/cmd.sh, after drivers are bound
	// and NICs are up; Prelude's helpers are defined before it.
	Script string
	// Files are host files copied into the guest's /lab/bin (on PATH).
	Files []string
	// CPUs is the guest's vCPU count (default 2); MemMB its RAM (default 512).
	CPUs  int
	MemMB int
	// Timeout bounds the whole boot (default 5 minutes).
	Timeout time.Duration
	// NoIfUp leaves the guest's NICs down.
	NoIfUp bool
	// Keep keeps run.sh's run directory (console.log, qemu command line).
	Keep bool
}

// Result is what came back from one boot.
type Result struct {
	// Output is the script's stdout and stderr, interleaved as written.
	Output string
	// ExitStatus is the script's exit status.
	ExitStatus int
	// BootSeconds is host wall time from QEMU's start to the script's start;
	// GuestUptime the guest's uptime at that moment; TotalSeconds the whole
	// run including power-off.
	BootSeconds  float64
	GuestUptime  float64
	TotalSeconds float64
	// Log is run.sh's own stderr (timing line, and the console tail on
	// failure).
	Log string
}

// Prelude is bash (guest/prelude.sh) defined before every Config.Script:
// `sec NAME CMD [ARGS]` runs CMD and prints its stdout, its stderr and its exit
// status between markers that Sections parses; `netfacts` prints one line per
// network interface with what sysfs says about it (see ParseNetFacts).
//
//go:embed guest/prelude.sh
var Prelude string

var timingRE = regexp.MustCompile(`boot-to-shell ([0-9.]+)s \(host wall; guest uptime ([0-9.]*)s\), total ([0-9.]+)s`)

// Run boots cfg.Topology from h's cache, runs cfg.Script in the guest and
// returns its output and exit status. The error is for a boot that never
// reached the end of the script (no image, bad topology, guest hung or
// crashed, timeout); a script that fails is a Result with a non-zero
// ExitStatus.
func (h Harness) Run(ctx context.Context, cfg Config) (Result, error) {
	if !h.Built() {
		return Result{}, fmt.Errorf("lab: no guest image in %q: see EnsureBuilt, or run internal/lab/build.sh with NICDIAG_LAB_CACHE set to it", h.CacheDir)
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = 2
	}
	if cfg.MemMB == 0 {
		cfg.MemMB = 512
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.Topology == "" {
		cfg.Topology = "links"
	}
	topo := cfg.Topology
	if !strings.Contains(topo, "/") {
		topo = filepath.Join(Dir(), "topologies", topo)
	}
	args := []string{"-t", topo, "-c", strconv.Itoa(cfg.CPUs), "-m", strconv.Itoa(cfg.MemMB),
		"-T", strconv.Itoa(int(cfg.Timeout.Seconds()))}
	for _, f := range cfg.Files {
		args = append(args, "-f", f)
	}
	if cfg.NoIfUp {
		args = append(args, "-n")
	}
	if cfg.Keep {
		args = append(args, "-k")
	}
	args = append(args, "-")
	// run.sh's own timeout kills QEMU; the context is a backstop.
	cmd, err := h.script(ctx, "run.sh", args...)
	if err != nil {
		return Result{}, err
	}
	cmd.Stdin = strings.NewReader(Prelude + cfg.Script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	res := Result{Output: stdout.String(), Log: stderr.String()}
	m := timingRE.FindStringSubmatch(res.Log)
	if m == nil {
		// run.sh prints the timing line only when the guest reached the end.
		return res, fmt.Errorf("lab: guest did not finish the script (%v):\n%s", err, res.Log)
	}
	res.BootSeconds, _ = strconv.ParseFloat(m[1], 64)
	res.GuestUptime, _ = strconv.ParseFloat(m[2], 64)
	res.TotalSeconds, _ = strconv.ParseFloat(m[3], 64)
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitStatus = ee.ExitCode()
	default:
		return res, fmt.Errorf("lab: run.sh: %w", err)
	}
	return res, nil
}
