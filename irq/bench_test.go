package irq

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
	"github.com/prometheus/procfs"
)

// procRoot writes a generated /proc/interrupts (see genInterrupts: a real
// 6.18 x86 layout widened to ncpu × nirq, synthetic counts) where both
// parsers find it: <root>/proc/interrupts, plus <root>/proc/1/ for procfs,
// whose Interrupts method hangs off a Proc.
func procRoot(b *testing.B, ncpu, nirq int) string {
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc", "1"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "interrupts"), genInterrupts(ncpu, nirq), 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkInterrupts reads and parses one /proc/interrupts sample, with
// this package and with procfs, in the same run.
func BenchmarkInterrupts(b *testing.B) {
	// 128×600 is the largest of these under procfs's 1 MiB read limit; the
	// others are over it and procfs panics on them (reported as a skip).
	for _, size := range [][2]int{{128, 600}, {128, 1000}, {256, 2048}} {
		root := procRoot(b, size[0], size[1])
		name := fmt.Sprintf("%dcpu-%dirq", size[0], size[1])
		b.Run("nicdiag/"+name, func(b *testing.B) {
			o := newOptions([]Option{option.Root(root)})
			x := new(Interrupts)
			k := kfile{path: interruptsFile}
			defer k.close()
			var buf []byte
			fi, _ := os.Stat(filepath.Join(root, "proc", "interrupts"))
			b.SetBytes(fi.Size())
			sample := func() { // every row's counts, as ReadInterrupts
				var err error
				if buf, err = readInterrupts(o.root, &k, buf, x, keepAll, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			sample() // the first parse sizes the buffers; then steady state
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				sample()
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			if len(x.Lines) < size[1] {
				b.Fatalf("%d rows", len(x.Lines))
			}
		})
		b.Run("procfs/"+name, func(b *testing.B) {
			fs, err := procfs.NewFS(filepath.Join(root, "proc"))
			if err != nil {
				b.Fatal(err)
			}
			p, err := fs.Proc(1)
			if err != nil {
				b.Fatal(err)
			}
			if err := procfsFails(p, size[1]); err != nil {
				b.Skipf("procfs cannot read this file: %v", err)
			}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := p.Interrupts(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// procfsFails reports how procfs fails on a file: a panic (a row cut at its
// 1 MiB read limit) or missing rows.
func procfsFails(p procfs.Proc, nirq int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	m, err := p.Interrupts()
	if err != nil {
		return err
	}
	if len(m) < nirq {
		return fmt.Errorf("read %d of %d IRQ rows", len(m), nirq)
	}
	return nil
}

// cpuTime is the process's user+system CPU time: on a shared, loaded
// machine it shows the work done, where ns/op also counts waiting for a CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Sizes of the large host of BenchmarkSample and BenchmarkSummarize
// (issue #17: 128 CPUs × 1000 IRQs × 16 NICs with queues).
const (
	benchCPUs     = 128
	benchIRQs     = 1000 // MSI-X vectors in /proc/interrupts
	benchNICs     = 16   // of them sampled: 16 queues each (genInterrupts)
	benchQueues   = 16
	benchPorts    = 4                      // root ports above them, 4 functions a port
	benchPCIe     = benchNICs + benchPorts // WithPCIe functions
	benchWatchPID = 1000                   // the watched tree: 5 processes of 4 threads
)

// benchAddr is the PCI address of genInterrupts' NIC k (the BDF in its
// rows' chip names).
func benchAddr(k int) string { return fmt.Sprintf("0000:%02x:00.%d", 1+k/4, k%4) }

// benchNIC is NIC k of benchHost as nicinfo lists it: its PCI function and
// that function's MSI-X vectors.
func benchNIC(k int) nicinfo.NIC {
	irqs := make([]int, benchQueues)
	for q := range irqs {
		irqs[q] = 24 + benchQueues*k + q
	}
	return nicinfo.NIC{Name: "eth" + strconv.Itoa(k), Bus: nicinfo.BusPCI,
		PCI: &nicinfo.PCIFunction{Address: pcie.Address(benchAddr(k)), IRQs: irqs}}
}

// benchHost lays out under a temp root the /proc and /sys a sample reads on
// a 128-CPU host: /proc/interrupts of 1000 MSI-X vectors (genInterrupts),
// /proc/stat, /proc/softirqs and /proc/net/softnet_stat for 128 CPUs,
// /proc/irq/N affinity files for the NICs' vectors, 16 E810 functions in
// sysfs as a snapshot has them (sys/class/net/ethK and
// sys/bus/pci/devices/ADDR relative links to sys/devices/..., msi_irqs/,
// statistics/ with the loss files, PCIe link and AER files), the 4 root
// ports above them with link and AER files, and a process tree of 20 tasks
// under pid 1000 among 50 others. It returns the root and the WithPCIe
// addresses.
func benchHost(b testing.TB) (string, []string) {
	root := b.TempDir()
	files := map[string]string{
		"proc/interrupts":                     string(genInterrupts(benchCPUs, benchIRQs)),
		"proc/stat":                           string(genStat(benchCPUs, 24+benchIRQs+512)),
		"proc/softirqs":                       string(genSoftirqs(benchCPUs)),
		"proc/net/softnet_stat":               string(genSoftnet(benchCPUs)),
		"sys/bus/pci/drivers/ice/uevent":      "DRIVER=ice\n",
		"sys/bus/pci/drivers/pcieport/uevent": "DRIVER=pcieport\n",
	}
	var addrs []string
	for k := 0; k < benchNICs; k++ {
		addr, iface := benchAddr(k), "eth"+strconv.Itoa(k)
		port := fmt.Sprintf("0000:00:%02x.0", 1+k/4)
		dev := "sys/devices/pci0000:00/" + port + "/" + addr
		files["sys/bus/pci/devices/"+addr] = "->../../../devices/pci0000:00/" + port + "/" + addr
		files["sys/class/net/"+iface] = "->../../devices/pci0000:00/" + port + "/" + addr + "/net/" + iface
		for f, v := range map[string]string{
			"vendor": "0x8086", "device": "0x1592", "subsystem_vendor": "0x8086", "subsystem_device": "0x0002",
			"class": "0x020000", "revision": "0x02", "numa_node": "0", "local_cpulist": "0-63", "irq": "0",
		} {
			files[dev+"/"+f] = v + "\n"
		}
		files[dev+"/driver"] = "->../../../../bus/pci/drivers/ice"
		pcieFiles(files, dev, k)
		net := dev + "/net/" + iface
		for f, v := range map[string]string{
			"ifindex": strconv.Itoa(2 + k), "address": fmt.Sprintf("b4:96:91:00:00:%02x", k), "mtu": "1500",
			"operstate": "up", "speed": "100000", "duplex": "full", "uevent": "INTERFACE=" + iface + "\nIFINDEX=" + strconv.Itoa(2+k) + "\n",
		} {
			files[net+"/"+f] = v + "\n"
		}
		files[net+"/device"] = "->../../../" + addr
		for i, f := range []string{"rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_dropped",
			"rx_missed_errors", "rx_fifo_errors", "rx_over_errors", "tx_dropped", "rx_errors", "tx_errors", "multicast"} {
			files[net+"/statistics/"+f] = strconv.Itoa(1000003*(k+1)*(i+1)) + "\n"
		}
		for q := 0; q < benchQueues; q++ {
			irq := 24 + benchQueues*k + q
			files[dev+"/msi_irqs/"+strconv.Itoa(irq)] = "msix\n"
			files[net+"/queues/rx-"+strconv.Itoa(q)+"/rps_cpus"] = "00000000,00000000,00000000,00000000\n"
			files[net+"/queues/tx-"+strconv.Itoa(q)+"/xps_cpus"] = "00000000,00000000,00000000,00000000\n"
			cpu := strconv.Itoa(irq % benchCPUs)
			files["proc/irq/"+strconv.Itoa(irq)+"/smp_affinity_list"] = "0-63\n"
			files["proc/irq/"+strconv.Itoa(irq)+"/effective_affinity_list"] = cpu + "\n"
			files["proc/irq/"+strconv.Itoa(irq)+"/node"] = "0\n"
		}
		addrs = append(addrs, addr)
	}
	for p := 1; len(addrs) < benchPCIe; p++ {
		port := fmt.Sprintf("0000:00:%02x.0", p)
		dev := "sys/devices/pci0000:00/" + port
		files["sys/bus/pci/devices/"+port] = "->../../../devices/pci0000:00/" + port
		files[dev+"/class"] = "0x060400\n"
		files[dev+"/driver"] = "->../../../bus/pci/drivers/pcieport"
		pcieFiles(files, dev, p)
		addrs = append(addrs, port)
	}
	snaptest.Add(b, root, files)
	benchProcs(b, root)
	return root, addrs
}

// pcieFiles adds to files the link and AER files of the PCI function at
// dir, with k correctable receiver errors.
func pcieFiles(files map[string]string, dir string, k int) {
	files[dir+"/current_link_speed"] = "16.0 GT/s PCIe\n"
	files[dir+"/current_link_width"] = "16\n"
	files[dir+"/max_link_speed"] = "16.0 GT/s PCIe\n"
	files[dir+"/max_link_width"] = "16\n"
	files[dir+"/aer_dev_correctable"] = fmt.Sprintf("RxErr %d\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR %d\n", k, k)
	var unc strings.Builder
	for _, n := range []string{"Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "CmpltAbrt", "UnxCmplt", "RxOF", "MalfTLP", "ECRC", "UnsupReq", "ACSViol", "UncorrIntErr", "BlockedTLP", "AtomicOpBlocked", "TLPBlockedErr", "PoisonTLPBlocked"} {
		unc.WriteString(n + " 0\n")
	}
	files[dir+"/aer_dev_nonfatal"] = unc.String() + "TOTAL_ERR_NONFATAL 0\n"
	files[dir+"/aer_dev_fatal"] = unc.String() + "TOTAL_ERR_FATAL 0\n"
}

// benchProcs writes benchHost's process tree under root: 20 tasks under
// pid benchWatchPID, each with a children file as the kernel has them,
// among 50 other processes.
func benchProcs(b testing.TB, root string) {
	var tasks []fakeTask
	for p := benchWatchPID; p < benchWatchPID+5; p++ {
		ppid := benchWatchPID
		if p == benchWatchPID {
			ppid = 1
		}
		for i := range 4 {
			tasks = append(tasks, fakeTask{pid: p, tid: p*100 + i, ppid: ppid, comm: "worker " + strconv.Itoa(i), utime: 100, stime: 10, start: 7, cpu: i})
		}
		tasks[len(tasks)-4].tid = p // the main thread
	}
	for p := 2000; p < 2050; p++ {
		tasks = append(tasks, fakeTask{pid: p, tid: p, ppid: 1, comm: "other", start: 7})
	}
	writeProcs(b, root, tasks, true)
	// As the kernel has them: a children file for every task, not only for
	// the main threads writeProcs gives one.
	for _, t := range tasks {
		p := filepath.Join(root, "proc", strconv.Itoa(t.pid), "task", strconv.Itoa(t.tid), "children")
		if _, err := os.Stat(p); os.IsNotExist(err) {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchLoop runs f as the benchmark's operation, once first (to size the
// buffers: the steady state is measured), and reports cpu-ns/op next to
// ns/op: on a shared, loaded machine ns/op also counts waiting for a CPU.
func benchLoop(b *testing.B, f func()) {
	f()
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkSample takes one steady-state sample (what Next does after its
// wait: read every source, then the rates against the previous reading)
// and, in sub-benchmarks, reads each source alone. Steady state is after
// the first sample: the files are open, the buffers sized.
//
// "fixture" is the host of issue #17 laid out by benchHost under a temp
// root: 128 CPUs, 1000 vectors in /proc/interrupts, 16 sampled NICs of 16
// queues (sysfs counters, loss files included), 20 WithPCIe functions and
// a watched tree of 20 tasks. Under a root every file is opened once
// through the root's confinement (an lstat per path component) and its
// link count checked at each read.
//
// "mounted" is the live code path (root "/") on the same host: in a
// throwaway mount and network namespace (newThrowawayHost, as root) the
// fixture's /proc/interrupts, /proc/stat, /proc/softirqs, /proc/irq and
// PCI devices are bound over the kernel's, and the 16 NICs are veth pairs
// of 16 queues whose counters the kernel keeps: sysfs statistics, netdev
// qstats, ethtool and pause statistics are asked of the kernel as on a real
// host (veth has no per-queue or pause counters, so each NIC costs the
// questions and their "none"). The watched tree is this test process and
// four children. /proc/net/softnet_stat is the kernel's (2 CPUs here).
// What the benchmark does not show is the kernel's own time to print a
// 128-CPU /proc/interrupts: a file system serves the fixture's.
//
// "live" samples this machine ("/"): its CPUs and IRQs, every interface
// with per-queue and ethtool loss counters over netlink and ethtool, every
// PCI function and this test process's tree.
func BenchmarkSample(b *testing.B) {
	ctx := context.Background()
	root, addrs := benchHost(b)
	type host struct {
		name  string
		new   func(*testing.B) *Sampler
		enter func(*testing.B) // runs each sub-benchmark in the host's namespaces
		check bool             // checkBenchSample holds
	}
	fixture := host{name: "fixture", check: true, enter: func(*testing.B) {}, new: func(b *testing.B) *Sampler {
		nics, err := nicinfo.List(ctx, option.Root(root), nicinfo.WithEthtool(nil))
		if err != nil || len(nics) != benchNICs {
			b.Fatalf("%d NICs, %v", len(nics), err)
		}
		return benchSampler(b, nics, benchWatchPID, option.Root(root), WithPCIe(addrs...))
	}}
	var th *throwawayHost
	mounted := host{name: "mounted",
		enter: func(b *testing.B) {
			if th == nil {
				var ifaces []string
				for k := range benchNICs {
					ifaces = append(ifaces, "eth"+strconv.Itoa(k))
				}
				th = newThrowawayHost(b, root, ifaces, benchQueues)
			}
			th.enter(b)
		},
		new: func(b *testing.B) *Sampler { return mountedSampler(b, addrs) }}
	live := host{name: "live", enter: func(*testing.B) {}, new: liveSampler}
	for _, h := range []host{fixture, mounted, live} {
		b.Run(h.name, func(b *testing.B) {
			h.enter(b)
			s := h.new(b)
			b.Cleanup(func() { s.Close() })
			b.Run("all", func(b *testing.B) {
				h.enter(b)
				var x Sample
				benchLoop(b, func() {
					if err := s.NextInto(ctx, &x); err != nil {
						b.Fatal(err)
					}
					if h.check {
						checkBenchSample(b, x)
					}
				})
			})
			b.Run("next", func(b *testing.B) { // a new Sample each time, as monitor keeps them
				h.enter(b)
				benchLoop(b, func() {
					if _, err := s.Next(ctx); err != nil {
						b.Fatal(err)
					}
				})
			})
			for _, src := range benchSources(b, s) {
				b.Run(src.name, func(b *testing.B) {
					h.enter(b)
					benchLoop(b, src.f)
				})
			}
		})
	}
}

// mountedSampler samples the throwaway host's veth NICs and the PCI
// functions at addrs, watching this process and four children.
func mountedSampler(b *testing.B, addrs []string) *Sampler {
	var nics []nicinfo.NIC
	for k := range benchNICs {
		nics = append(nics, benchNIC(k))
	}
	for range 4 {
		cmd := exec.Command("sleep", "3600")
		if err := cmd.Start(); err != nil {
			b.Skip(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	return benchSampler(b, nics, os.Getpid(), WithPCIe(addrs...))
}

// liveSampler samples this machine: every interface and PCI function, and
// this process's tree.
func liveSampler(b *testing.B) *Sampler {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		b.Skip("no /proc")
	}
	nics, err := nicinfo.List(context.Background())
	if err != nil {
		b.Skip(err)
	}
	fns, _ := os.ReadDir("/sys/bus/pci/devices")
	var pci []string
	for _, f := range fns {
		pci = append(pci, f.Name())
	}
	return benchSampler(b, nics, os.Getpid(), WithPCIe(pci...))
}

// benchSampler returns a sampler on nics that watches pid, with a clock
// that steps a second at each reading (Next never waits), after one Next:
// both readings are filled.
func benchSampler(b *testing.B, nics []nicinfo.NIC, pid int, opts ...Option) *Sampler {
	t := time.Unix(1_000_000, 0)
	opts = append(opts, withClock(func() time.Time { t = t.Add(time.Second); return t }))
	s, err := NewSampler(context.Background(), nics, opts...)
	if err != nil {
		b.Fatal(err)
	}
	s.Watch(pid)
	if _, err := s.Next(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}

// checkBenchSample fails b unless x has everything benchHost lays out.
func checkBenchSample(b *testing.B, x Sample) {
	if len(x.CPUs) != benchCPUs || len(x.NICs) != benchNICs || len(x.PCIe) != benchPCIe || len(x.Threads) != 20 || len(x.Missing) > 0 {
		b.Fatalf("%d CPUs, %d NICs, %d PCIe, %d threads, missing %q", len(x.CPUs), len(x.NICs), len(x.PCIe), len(x.Threads), x.Missing)
	}
	for _, n := range x.NICs {
		if len(n.Queues) != benchQueues || len(n.Losses) != 5 || n.StatsError != "" {
			b.Fatalf("%s: %d queues, %d losses, %q", n.Name, len(n.Queues), len(n.Losses), n.StatsError)
		}
	}
	for _, p := range x.PCIe {
		if p.Error != "" || p.AERCorrectable == nil || p.Width != 16 {
			b.Fatalf("%+v", p)
		}
	}
}

// benchSources are the sources of one reading of s, each alone, for
// BenchmarkSample.
func benchSources(b *testing.B, s *Sampler) []struct {
	name string
	f    func()
} {
	r := s.cur
	var x Sample
	return []struct {
		name string
		f    func()
	}{
		{"interrupts", func() {
			if err := s.readInterrupts(r); err != nil {
				b.Fatal(err)
			}
		}},
		{"stat", func() {
			if err := s.readStat(r); err != nil {
				b.Fatal(err)
			}
		}},
		{"softirqs", func() {
			if err := s.readSoftirqs(r); err != nil {
				b.Fatal(err)
			}
		}},
		{"softnet", func() { s.readSoftnet(r) }},
		{"nics", func() { // interface counters, per-queue (live) and loss counters
			r.missing = r.missing[:0]
			s.readNICs(r)
			s.readLosses(r)
		}},
		{"pcie", func() { s.readPCIe(r) }},
		{"tasks", func() { s.readTasks(r) }},
		{"rates", func() { s.rates(s.prev, s.cur, &x) }},
	}
}

// benchSamples builds n one-second samples of the large host: 128 CPUs
// (CPU 5 saturated by softirq, CPU 9 dropping from its backlog and CPU 17
// squeezed in every sample, so each finding is raised), 16 NICs of 16
// queues with 5 loss counters each, 20 watched threads and 20 PCIe
// functions.
func benchSamples(n int) []Sample {
	out := make([]Sample, n)
	t0 := time.Unix(1_000_000, 0)
	accounted := 1.0
	for i := range out {
		x := Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1, IRQTimeAccounted: true}
		for c := 0; c < benchCPUs; c++ {
			r := CPURate{CPU: c, IRQPct: &accounted, SoftIRQPct: 2, BusyPct: 10, UserPct: 5, SystemPct: 2, IdlePct: 90,
				NetRXPerS: 1000, NetTXPerS: 500, NICIRQsPerS: 800, SoftnetProcessedPerS: 20000}
			switch c {
			case 5:
				r.SoftIRQPct, r.BusyPct, r.IdlePct = 95, 99, 1
			case 9:
				r.SoftnetDroppedPerS = 50
			case 17:
				r.SoftnetSqueezedPerS = 100
			}
			x.CPUs = append(x.CPUs, r)
		}
		for k := 0; k < benchNICs; k++ {
			nr := NICRate{Name: "eth" + strconv.Itoa(k), RXPacketsPerS: 1e6, TXPacketsPerS: 5e5, RXBytesPerS: 1.5e9, TXBytesPerS: 7e8, IRQsPerS: 16 * 800}
			for q := 0; q < 16; q++ {
				pk, by := 62500.0, 62500.0*1500
				nr.Queues = append(nr.Queues, QueueRate{IRQ: 24 + 16*k + q, Action: fmt.Sprintf("eth%d-TxRx-%d", k, q), Kind: KindTxRx, Index: q,
					IRQsPerS: 800, CPU: (16*k + q) % benchCPUs, EffectiveCPUs: []int{(16*k + q) % benchCPUs},
					RXPacketsPerS: &pk, RXBytesPerS: &by, TXPacketsPerS: &pk, TXBytesPerS: &by})
			}
			for _, l := range []string{"rx_dropped", "rx_fifo_errors", "rx_missed_errors", "rx_over_errors", "tx_dropped"} {
				nr.Losses = append(nr.Losses, LossRate{Name: lossSysfs + l, Class: LossNIC, PerS: float64(i % 3)})
			}
			x.NICs = append(x.NICs, nr)
		}
		for t := 0; t < 20; t++ {
			x.Threads = append(x.Threads, ThreadRate{PID: 1000 + t/4, TID: 100000 + t, Comm: "worker", UserPct: float64(t), SystemPct: 1, CPU: t})
		}
		for p := 0; p < benchPCIe; p++ {
			var zero uint64
			x.PCIe = append(x.PCIe, PCIeState{Address: benchAddr(p), GTs: 16, Width: 16, AERCorrectable: &zero, AERNonFatal: &zero, AERFatal: &zero})
		}
		out[i] = x
	}
	return out
}

// BenchmarkSummarize folds a 10-minute window at 1 Hz (600 samples of the
// large host) into its Summary.
func BenchmarkSummarize(b *testing.B) {
	samples := benchSamples(600)
	var s Summary
	benchLoop(b, func() { s = Summarize(samples) })
	if len(s.CPUs) != benchCPUs || len(s.NICs) != benchNICs || len(s.Threads) != 20 || len(s.PCIe) != benchPCIe || len(s.Findings) != 3 {
		b.Fatalf("%d CPUs, %d NICs, %d threads, %d PCIe, findings %s", len(s.CPUs), len(s.NICs), len(s.Threads), len(s.PCIe), codes(s.Findings))
	}
}
