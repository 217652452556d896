package stack

import (
	"context"
	"github.com/nicdiag/nicdiag/option"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// copyTree copies the files of dir into root, over files already there
// (written in place, so that a file the sampler holds open reads the new
// contents).
func copyTree(t *testing.T, dir, root string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// procfsRoot lays the recorded proc/net files of dir out as procfs reads
// a process's (PID 1) and returns its FS.
func procfsRoot(t *testing.T, dir string) procfs.FS {
	t.Helper()
	root := t.TempDir()
	copyTree(t, filepath.Join(dir, "proc/net"), filepath.Join(root, "1/net"))
	copyTree(t, filepath.Join(dir, "proc/net"), filepath.Join(root, "net"))
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// The hand parsers agree with github.com/prometheus/procfs (the oracle)
// on every counter both read, on recorded files.
func TestParsersAgainstProcfs(t *testing.T) {
	for _, dir := range []string{"testdata/vm-6.18", "testdata/udp-rcvbuf/after"} {
		t.Run(dir, func(t *testing.T) {
			var c counters
			for _, f := range []string{"snmp", "netstat"} {
				b, err := os.ReadFile(filepath.Join(dir, "proc/net", f))
				if err != nil {
					t.Fatal(err)
				}
				if err := parseTables("/proc/net/"+f, b, &c); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := os.ReadFile(filepath.Join(dir, "proc/net/snmp6"))
			if err := parseSNMP6(b, &c); err != nil {
				t.Fatal(err)
			}
			fs := procfsRoot(t, dir)
			p, err := fs.Proc(1)
			if err != nil {
				t.Fatal(err)
			}
			snmp, err1 := p.Snmp()
			nst, err2 := p.Netstat()
			s6, err3 := p.Snmp6()
			if err1 != nil || err2 != nil || err3 != nil {
				t.Fatal(err1, err2, err3)
			}
			f := func(v ...*float64) uint64 {
				var s float64
				for _, x := range v {
					if x != nil {
						s += *x
					}
				}
				return uint64(s)
			}
			for _, w := range []struct {
				name string
				got  uint64
				want uint64
			}{
				{"udp in", c[cUDPIn], f(snmp.Udp.InDatagrams, s6.Udp6.InDatagrams)},
				{"udp out", c[cUDPOut], f(snmp.Udp.OutDatagrams, s6.Udp6.OutDatagrams)},
				{"udp inerrors", c[cUDPInErrors], f(snmp.Udp.InErrors, s6.Udp6.InErrors)},
				{"udp rcvbuf", c[cUDPRcvbuf], f(snmp.Udp.RcvbufErrors, s6.Udp6.RcvbufErrors)},
				{"udp sndbuf", c[cUDPSndbuf], f(snmp.Udp.SndbufErrors, s6.Udp6.SndbufErrors)},
				{"udp noports", c[cUDPNoPorts], f(snmp.Udp.NoPorts, s6.Udp6.NoPorts)},
				{"tcp insegs", c[cTCPInSegs], f(snmp.Tcp.InSegs)},
				{"tcp outsegs", c[cTCPOutSegs], f(snmp.Tcp.OutSegs)},
				{"tcp retrans", c[cTCPRetrans], f(snmp.Tcp.RetransSegs)},
				{"tcp passive opens", c[cTCPPassiveOpens], f(snmp.Tcp.PassiveOpens)},
				{"rcvq drop", c[cRcvQDrop], f(nst.TCPRcvQDrop)},
				{"backlog drop", c[cBacklogDrop], f(nst.TCPBacklogDrop)},
				{"ofo drop", c[cOFODrop], f(nst.TCPOFODrop)},
				{"prune called", c[cPruneCalled], f(nst.PruneCalled)},
				{"rcv pruned", c[cRcvPruned], f(nst.RcvPruned)},
				{"listen overflows", c[cListenOverflows], f(nst.ListenOverflows)},
				{"listen drops", c[cListenDrops], f(nst.ListenDrops)},
				{"memory pressures", c[cMemPressures], f(nst.TCPMemoryPressures)},
			} {
				if w.got != w.want {
					t.Errorf("%s: %d, procfs %d", w.name, w.got, w.want)
				}
			}
		})
	}
}

// The conntrack statistics parser agrees with procfs's ConntrackStat.
func TestConntrackStatAgainstProcfs(t *testing.T) {
	for _, dir := range []string{"testdata/vm-6.18", "testdata/conntrack-full/after"} {
		b, err := os.ReadFile(filepath.Join(dir, "proc/net/stat/nf_conntrack"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseConntrackStat(b)
		if err != nil {
			t.Fatal(err)
		}
		es, err := procfsRoot(t, dir).ConntrackStat()
		if err != nil {
			t.Fatal(err)
		}
		var want ctStats
		for _, e := range es {
			want[ctFound] += e.Found
			want[ctInvalid] += e.Invalid
			want[ctInsert] += e.Insert
			want[ctInsertFailed] += e.InsertFailed
			want[ctDrop] += e.Drop
			want[ctEarlyDrop] += e.EarlyDrop
		}
		if got != want {
			t.Errorf("%s: %v, procfs %v", dir, got, want)
		}
	}
}

// recordedRun reads dir/before then dir/after under a root, one
// interval of a second apart, and returns the sample and the summary.
func recordedRun(t *testing.T, dir string) (Sample, Summary) {
	t.Helper()
	root := t.TempDir()
	copyTree(t, filepath.Join(dir, "before"), root)
	now := time.Unix(1000, 0)
	s, err := NewSampler(context.Background(), option.Root(root), withClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	copyTree(t, filepath.Join(dir, "after"), root)
	now = now.Add(time.Second)
	x, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a := NewAggregator()
	a.Add(x)
	return x, a.Summary()
}

// The recorded UDP run into a 16 KiB buffer: the socket layer counts the
// run's RcvbufErrors and says what share of the datagrams the socket
// dropped.
func TestRecordedUDPDrops(t *testing.T) {
	x, s := recordedRun(t, "testdata/udp-rcvbuf")
	if len(x.Namespaces) != 1 || x.Namespaces[0].Sockets == nil {
		t.Fatalf("namespaces %+v, missing %v", x.Namespaces, x.Missing)
	}
	c := x.Namespaces[0].Sockets
	if c.UDPRcvbufErrors != 23576 || c.UDPInDatagrams != 134133 || c.UDPInErrors != 23576 {
		t.Errorf("counts %+v", c)
	}
	j := s.judgement(LayerSocket, "udp_receive_buffer")
	if j == nil || !j.Bound || s.state(LayerSocket).State != StateBound ||
		!strings.Contains(j.Summary, "dropped 15 % of the datagrams (23576 of 157709)") ||
		!strings.Contains(j.Summary, "net.core.rmem_default, 208 KiB") {
		t.Fatalf("%+v", j)
	}
	if s.state(LayerTransport).State != StateNotApplicable || s.state(LayerConntrack).State != StateNotApplicable {
		t.Errorf("layers %+v", s.Layers)
	}
}

// The recorded (reconstructed) full conntrack table: drops bind the run,
// and the fix raises nf_conntrack_max.
func TestRecordedConntrackFull(t *testing.T) {
	x, s := recordedRun(t, "testdata/conntrack-full")
	c := x.Namespaces[0].Conntrack
	if c == nil || c.Count != 262144 || c.Max != 262144 || c.Drop != 412 || c.EarlyDrop != 3072 || c.InsertFailed != 12 {
		t.Fatalf("conntrack %+v, missing %v", c, x.Missing)
	}
	j := s.judgement(LayerConntrack, "conntrack_drops")
	if j == nil || !j.Bound || s.state(LayerConntrack).State != StateBound || j.Share != 1 ||
		!strings.Contains(j.Fix, "nf_conntrack_max=524288") || !strings.Contains(j.Summary, "dropped 424 packets") {
		t.Fatalf("%+v", j)
	}
}

// An empty root: nothing to read, every layer unknown or not applicable,
// no failure.
func TestEmptyRoot(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "proc"), 0o755)
	s, err := NewSampler(context.Background(), option.Root(root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	time.Sleep(time.Millisecond)
	x, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Missing) == 0 {
		t.Error("nothing missing in an empty root")
	}
	a := NewAggregator()
	a.Add(x)
	sum := a.Summary()
	if sum.Room() {
		t.Errorf("an empty root has room: %+v", sum.Layers)
	}
	if sum.state(LayerSocket).State != StateUnknown {
		t.Errorf("socket layer %+v", sum.state(LayerSocket))
	}
}
