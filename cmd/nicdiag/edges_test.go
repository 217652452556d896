// Tests of the CLI at its edges: unknown commands and names, bad flags,
// roots that are not snapshots, files it cannot write.
package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHelpUnknownCommand(t *testing.T) {
	out, stderr, code := runCLI(t, "help", "bogus")
	if code != exitFail || out != "" || !strings.Contains(stderr, `unknown command "bogus"`) {
		t.Errorf("help bogus: exit %d, stdout %q, stderr %q; want 3 and the error on stderr", code, out, stderr)
	}
}

// A one-letter flag is shown as the help text and examples write it (-o),
// and a command without arguments has no trailing blank in its usage line.
func TestUsageRendering(t *testing.T) {
	out, _, _ := runCLI(t, "help", "snapshot")
	if !strings.Contains(out, "\n  -o FILE\n") || strings.Contains(out, "--o ") {
		t.Errorf("snapshot help does not show -o FILE:\n%s", out)
	}
	if !strings.Contains(out, "--root PATH") {
		t.Errorf("snapshot help does not show --root PATH:\n%s", out)
	}
	out, _, _ = runCLI(t, "help", "serve")
	if !strings.HasPrefix(out, "usage: nicdiag serve [flags]\n") {
		t.Errorf("serve usage line: %q", strings.SplitN(out, "\n", 2)[0])
	}
	for _, c := range commands {
		if c.name == "monitor" { // monitor.go is not this review's
			continue
		}
		out, _, _ := runCLI(t, "help", c.name)
		if !strings.Contains(out, "Examples:\n  ") {
			t.Errorf("help %s has no Examples section", c.name)
		}
	}
}

func TestExplainRejectsBadWorkloadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--frame-size", "0"},   // used to run 1518-byte frames silently
		{"--port-speed", "-3"},  // used to run the link speed silently
		{"--ports", "5"},        // used to add 3 phantom ports to the ceiling
		{"--port-speed", "NaN"}, // not a rate
	} {
		out, stderr, code := runCLI(t, append([]string{"--root", snaps + "82576-minipcie-x1", "explain", "enp1s0f0"}, args...)...)
		if code != exitFail || out != "" || !strings.Contains(stderr, "nicdiag") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 3 with a message", args, code, out, stderr)
		}
	}
	_, stderr, _ := runCLI(t, "--root", snaps+"82576-minipcie-x1", "explain")
	if !strings.Contains(stderr, "need exactly one interface") {
		t.Errorf("explain without IFACE: stderr %q lacks what is missing", stderr)
	}
}

// The worked calculation has its "assumptions:" heading even when the model
// made no assumption of its own (explicit --ports).
func TestExplainAssumptionsHeading(t *testing.T) {
	out, _, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "explain", "--ports", "2", "enp1s0f0")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	h, b := strings.Index(out, "\nassumptions:\n"), strings.Index(out, "DMA profile basis")
	if h < 0 || b < h {
		t.Errorf("DMA profile basis is not under an assumptions heading:\n%s", out)
	}
}

func TestPCIAddressOfInterface(t *testing.T) {
	root := snaps + "82576-minipcie-x1"
	out, stderr, code := runCLI(t, "--root", root, "explain", "0000:01:00.0")
	if code != exitOK || !strings.HasPrefix(out, "enp1s0f0 (0000:01:00.0)") {
		t.Errorf("explain 0000:01:00.0: exit %d, stderr %q\n%s", code, stderr, out)
	}
	out, stderr, code = runCLI(t, "--root", root, "check", "01:00.0", "enp1s0f0")
	if code != exitWarn || !strings.HasPrefix(out, "checked 1 interface(s): enp1s0f0\n") {
		t.Errorf("check 01:00.0 enp1s0f0: exit %d, stderr %q\n%s", code, stderr, out)
	}
}

func TestUnknownInterfaceMessages(t *testing.T) {
	for _, cmd := range []string{"show", "check", "explain"} {
		_, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", cmd, "nope0")
		if code != exitFail || !strings.Contains(stderr, `"nope0"`) || !strings.Contains(stderr, "nicdiag list --all") ||
			strings.Count(stderr, "nicdiag:") != 1 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s nope0: exit %d, stderr %q", cmd, code, stderr)
		}
	}
}

// An empty directory (or any without sys/ and proc/) is a wrong --root, not
// a host without NICs: check used to say "no findings" and exit 0.
func TestRootThatIsNotASnapshot(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range [][]string{{"check"}, {"list"}, {"show", "eth0"}} {
		out, stderr, code := runCLI(t, append([]string{"--root", dir}, cmd...)...)
		if code != exitFail || out != "" || !strings.Contains(stderr, "not a snapshot") {
			t.Errorf("%v on an empty root: exit %d, stdout %q, stderr %q", cmd, code, out, stderr)
		}
	}
}

// A virtual interface without PCI (lo, ifb) has no PCIe link to call
// emulated.
func TestShowNonPCIVirtual(t *testing.T) {
	out, _, code := runCLI(t, "--root", snaps+"firecracker-virtio-vm", "show", "lo")
	if code != exitOK || strings.Contains(out, "PCIe") {
		t.Errorf("show lo: exit %d, mentions PCIe:\n%s", code, out)
	}
}

func TestSnapshotUnwritableNamesTheFile(t *testing.T) {
	p := t.TempDir() + "/no/such/dir/host.tar.gz"
	_, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "snapshot", "-o", p)
	if code != exitFail || !strings.Contains(stderr, p) || strings.Contains(stderr, ".nicdiag-snapshot-") {
		t.Errorf("exit %d, stderr %q; want 3 naming %s, not the temporary file", code, stderr, p)
	}
}

// The line-rate formula is the one that gives the figure beside it: with
// one-way forwarding half the ports receive and half send, so 2 ports
// carry 987 Mb/s each way, not 2 × 1000 × 1518/1538.
func TestExplainForwardFormula(t *testing.T) {
	out, _, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "explain", "--direction", "forward", "enp1s0f0")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "line rate of the ports in use: 987 Mb/s") || !strings.Contains(out, "(2/2 × 1000 Mb/s × 1518/(1518+20)") {
		t.Errorf("forward line rate and its formula disagree:\n%s", out)
	}
}

// --report and --record in a directory that cannot hold them fail before
// the command starts.
func TestMonitorOutputsCheckedFirst(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	for _, flag := range []string{"--report", "--record"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"monitor", flag, "/nonexistent/dir/x.html", "--", "touch", marker}, &out, &errb)
		if code != exitFail || !strings.Contains(errb.String(), "/nonexistent") {
			t.Errorf("%s: exit %d, stderr %q", flag, code, errb.String())
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the command ran", flag)
		}
	}
}
