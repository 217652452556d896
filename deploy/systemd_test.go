package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/testbin"
)

const (
	exporterUnit  = "systemd/nicdiag_exporter.service"
	textfileUnit  = "systemd/nicdiag-textfile.service"
	textfileTimer = "systemd/nicdiag-textfile.timer"
	capsDropIn    = "systemd/nicdiag_exporter.service.d/capabilities.conf"
	seed          = "../testdata/snapshots/82576-minipcie-x1"
)

// unit is a unit file's settings, by key, in order.
type unit map[string][]string

func readUnit(t *testing.T, path string) (unit, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s: line %q", path, line)
			continue
		}
		u[k] = append(u[k], v)
	}
	return u, b
}

// want fails the test unless each key is set once, to its value.
func (u unit) want(t *testing.T, where string, kv map[string]string) {
	t.Helper()
	for k, v := range kv {
		if got := u[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s: %s=%v, want %s", where, k, got, v)
		}
	}
}

// sandbox is the hardening both services carry (README "Fleet").
var sandbox = map[string]string{
	"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
	"PrivateDevices": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
	"ProtectControlGroups": "yes", "RestrictNamespaces": "yes", "SystemCallArchitectures": "native",
	"MemoryDenyWriteExecute": "yes",
}

func checkSandbox(t *testing.T, where string, u unit) {
	t.Helper()
	u.want(t, where, sandbox)
	if got := u["SystemCallFilter"]; len(got) != 2 || got[0] != "@system-service" || got[1] != "~@privileged" {
		t.Errorf("%s: SystemCallFilter=%v, want @system-service, then ~@privileged", where, got)
	}
	if _, ok := u["PrivateUsers"]; ok {
		t.Errorf("%s: PrivateUsers= would take CAP_SYS_ADMIN out of the initial user namespace: config reads drop to 64 bytes even where granted", where)
	}
	if _, ok := u["PrivateNetwork"]; ok {
		t.Errorf("%s: PrivateNetwork= would hide the host's NICs", where)
	}
}

// binaries builds nicdiag and nicdiag_exporter once, as released (static,
// without cgo), and returns their directory.
func binaries(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "../cmd/nicdiag", "../cmd/nicdiag_exporter")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

// execArgs splits ExecStart into the installed binary's name and its
// arguments.
func execArgs(t *testing.T, where string, u unit) (string, []string) {
	t.Helper()
	e := u["ExecStart"]
	if len(e) != 1 {
		t.Fatalf("%s: ExecStart=%v", where, e)
	}
	f := strings.Fields(e[0])
	if !strings.HasPrefix(f[0], "/usr/local/bin/") {
		t.Fatalf("%s: ExecStart=%s, want /usr/local/bin/NAME", where, e[0])
	}
	return filepath.Base(f[0]), f[1:]
}

// The exporter's unit: the sandbox, a dynamic user with no capability
// (it listens on the network) and IP traffic with loopback peers only,
// and an ExecStart whose flags nicdiag_exporter accepts: with them (on
// another port, over the seed snapshot) it serves the exposition and
// stops on SIGTERM with exit 0. The drop-in that grants the capabilities
// grants CAP_SYS_ADMIN and CAP_NET_ADMIN, each in a pair of lines that
// can be deleted alone.
func TestExporterUnit(t *testing.T) {
	u, _ := readUnit(t, exporterUnit)
	checkSandbox(t, exporterUnit, u)
	u.want(t, exporterUnit, map[string]string{
		"DynamicUser": "yes", "CapabilityBoundingSet": "", "Type": "simple",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX AF_NETLINK AF_VSOCK",
		"IPAddressDeny":           "any", "IPAddressAllow": "localhost",
	})
	if a, ok := u["AmbientCapabilities"]; ok {
		t.Errorf("AmbientCapabilities=%v in the network-facing unit", a)
	}
	d, _ := readUnit(t, capsDropIn)
	want := []string{"CAP_SYS_ADMIN", "CAP_NET_ADMIN"}
	if !slices.Equal(d["AmbientCapabilities"], want) || !slices.Equal(d["CapabilityBoundingSet"], want) || len(d) != 2 {
		t.Errorf("%s: %v, want AmbientCapabilities= and CapabilityBoundingSet= lines for %v", capsDropIn, d, want)
	}
	name, args := execArgs(t, exporterUnit, u)
	if name != "nicdiag_exporter" || !slices.Contains(args, "--web.listen-address=127.0.0.1:9799") {
		t.Errorf("ExecStart: %s %v", name, args)
	}
	for i, a := range args {
		if strings.HasPrefix(a, "--web.listen-address=") {
			args[i] = "--web.listen-address=127.0.0.1:0"
		}
	}
	cmd := exec.Command(filepath.Join(binaries(t), name), append(args, "--root", seed)...)
	log := &testbin.Buffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`msg="Listening on" address=(\S+)`)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("nicdiag_exporter %v did not listen:\n%s", args, log.String())
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/metrics")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "\nnicdiag_up 1\n") {
			t.Errorf("scrape: %d\n%s", resp.StatusCode, body)
		}
	} else {
		t.Error(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v\n%s", err, log.String())
	}
}

// The textfile units: a oneshot service in the sandbox that may write only
// the collector's directory, whose ExecStart nicdiag accepts (with -o in a
// directory of the test's, over the seed snapshot, it writes nicdiag.prom
// with mode 0644 and exits with a status the unit counts as success), and
// a timer that starts it again and again.
func TestTextfileUnits(t *testing.T) {
	u, _ := readUnit(t, textfileUnit)
	checkSandbox(t, textfileUnit, u)
	u.want(t, textfileUnit, map[string]string{"Type": "oneshot", "SuccessExitStatus": "1 2", "CapabilityBoundingSet": "CAP_SYS_ADMIN CAP_NET_ADMIN"})
	if _, ok := u["DynamicUser"]; ok {
		t.Error("a dynamic user cannot write into node_exporter's directory")
	}
	name, args := execArgs(t, textfileUnit, u)
	out := ""
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			out = args[i+1]
			args[i+1] = filepath.Join(t.TempDir(), filepath.Base(out))
		}
	}
	if name != "nicdiag" || strings.Join(args[:3], " ") != "check --format prom" || !strings.HasSuffix(out, ".prom") {
		t.Fatalf("ExecStart: %s %v", name, args)
	}
	u.want(t, textfileUnit, map[string]string{"ReadWritePaths": filepath.Dir(out)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := exec.CommandContext(ctx, filepath.Join(binaries(t), name), append([]string{"--root", seed}, args...)...).Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 && !slices.Contains(strings.Fields(u["SuccessExitStatus"][0]), fmt.Sprint(code)) {
		t.Errorf("nicdiag %v exited %d, which the unit counts as a failure", args, code)
	}
	written := args[len(args)-1]
	b, err := os.ReadFile(written)
	if err != nil || !strings.Contains(string(b), "\nnicdiag_up 1\n") {
		t.Errorf("%s: %v\n%s", written, err, b)
	}
	if fi, err := os.Stat(written); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("%s: %v, want mode 0644", written, fi.Mode())
	}

	timer, _ := readUnit(t, textfileTimer)
	timer.want(t, textfileTimer, map[string]string{"OnBootSec": "1min", "OnUnitActiveSec": "1min", "WantedBy": "timers.target"})
	if _, ok := timer["Unit"]; ok || strings.TrimSuffix(filepath.Base(textfileTimer), ".timer") != strings.TrimSuffix(filepath.Base(textfileUnit), ".service") {
		t.Errorf("%s does not start %s (its namesake)", textfileTimer, textfileUnit)
	}
}

// systemd-analyze verify accepts the three units, and the exporter's with
// its drop-in (appended: a drop-in's sections merge into the unit's),
// where it is installed.
func TestUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not on PATH: units not verified")
	}
	// verify wants ExecStart's binary to exist: point it at one that does.
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, f := range [][]string{{exporterUnit}, {textfileUnit}, {textfileTimer}, {exporterUnit, capsDropIn}} {
		var b []byte
		for _, part := range f {
			c, err := os.ReadFile(part)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, c...)
		}
		b = regexp.MustCompile(`/usr/local/bin/\S+`).ReplaceAll(b, []byte(bin))
		p := filepath.Join(dir, filepath.Base(f[0]))
		if len(f) > 1 {
			p = filepath.Join(dir, "nicdiag_exporter-with-capabilities.service")
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, p)
	}
	out, err := exec.Command(analyze, append([]string{"verify"}, units...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// What the textfile unit's comment says of the collector's directory, as
// setpriv reproduces the unit's credentials (root bounded to its two
// capabilities; the drop-in's user with them ambient): root without
// CAP_DAC_OVERRIDE cannot write into a directory another user owns (exit
// 3, permission denied), can into its own, and that user can into its.
func TestTextfileDirectoryOwner(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and setpriv (util-linux)")
	}
	u, _ := readUnit(t, textfileUnit)
	caps := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(u["CapabilityBoundingSet"][0], "CAP_", "+"), " ", ","))
	bin := filepath.Join(binaries(t), "nicdiag")
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755) // the user must reach its directory
	os.Chmod(dir, 0o755)
	other, own := filepath.Join(dir, "other"), filepath.Join(dir, "own")
	for _, d := range []string{other, own} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	run := func(creds []string, out string) (int, string) {
		args := append(append([]string{"--bounding-set=-all," + caps}, creds...),
			bin, "--root", seed, "check", "--format", "prom", "-o", filepath.Join(out, "nicdiag.prom"))
		var stderr bytes.Buffer
		cmd := exec.Command(setpriv, args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stderr.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	ok := strings.Fields(u["SuccessExitStatus"][0])
	if code, msg := run(nil, other); code != 3 || !strings.Contains(msg, "permission denied") {
		t.Errorf("root into nobody's directory: exit %d, %s", code, msg)
	}
	if code, msg := run(nil, own); code != 0 && !slices.Contains(ok, fmt.Sprint(code)) {
		t.Errorf("root into root's directory: exit %d, %s", code, msg)
	}
	user := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=" + caps, "--ambient-caps=" + caps}
	if code, msg := run(user, other); code != 0 && !slices.Contains(ok, fmt.Sprint(code)) {
		t.Errorf("the owner, capabilities ambient, into its directory: exit %d, %s", code, msg)
	}
}
