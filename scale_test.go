package nicdiag

import (
	"context"
	"fmt"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// scaleTree lays out n igb ports (8 functions a card) behind one PCIe
// switch: root port 00:01.0 → switch 01:00.0 → one downstream port per card
// (02:DD.0) → the card's functions on bus 3+card. The IDs and link values
// are the I350's (8086:1521, 5 GT/s x4); the layout is the kernel's.
func scaleTree(tb testing.TB, n int) string {
	files := map[string]string{}
	fn := func(dir, vendor, device, class string, speed string, width int) {
		files[dir+"/vendor"] = vendor + "\n"
		files[dir+"/device"] = device + "\n"
		files[dir+"/class"] = class + "\n"
		for _, k := range []string{"current", "max"} {
			files[dir+"/"+k+"_link_speed"] = speed + "\n"
			files[dir+"/"+k+"_link_width"] = fmt.Sprintf("%d\n", width)
		}
	}
	link := func(addr, dir string) {
		files["sys/bus/pci/devices/"+addr] = "->../../../" + dir[len("sys/"):]
	}
	rp := "sys/devices/pci0000:00/0000:00:01.0"
	usp := rp + "/0000:01:00.0"
	fn(rp, "0x8086", "0x1901", "0x060400", "8.0 GT/s PCIe", 16)
	fn(usp, "0x10b5", "0x8747", "0x060400", "8.0 GT/s PCIe", 16)
	link("0000:00:01.0", rp)
	link("0000:01:00.0", usp)
	for i := 0; i < n; i++ {
		card, f := i/8, i%8
		dsp := fmt.Sprintf("%s/0000:02:%02x.0", usp, card)
		if f == 0 {
			fn(dsp, "0x10b5", "0x8747", "0x060400", "5.0 GT/s PCIe", 4)
			link(fmt.Sprintf("0000:02:%02x.0", card), dsp)
		}
		addr := fmt.Sprintf("0000:%02x:00.%d", 3+card, f)
		dev := dsp + "/" + addr
		fn(dev, "0x8086", "0x1521", "0x020000", "5.0 GT/s PCIe", 4)
		link(addr, dev)
		name := fmt.Sprintf("eth%d", i)
		net := dev + "/net/" + name
		files[net+"/device"] = "->../../../" + addr
		files[net+"/ifindex"] = fmt.Sprintf("%d\n", i+2)
		files[net+"/address"] = fmt.Sprintf("00:1b:21:00:%02x:%02x\n", i/256, i%256)
		files[net+"/operstate"] = "up\n"
		files[net+"/speed"] = "1000\n"
		files[net+"/duplex"] = "full\n"
		files[net+"/mtu"] = "1500\n"
		files[net+"/queues/rx-0/rps_cpus"] = "0\n"
		files[net+"/queues/tx-0/xps_cpus"] = "0\n"
		files["sys/class/net/"+name] = "->../../" + net[len("sys/"):]
	}
	return snaptest.Write(tb, files)
}

// BenchmarkCheckNICs is Check over 1 to 256 NICs behind one switch: the
// cost per NIC should stay flat (linear in the number of NICs).
func BenchmarkCheckNICs(b *testing.B) {
	for _, n := range []int{1, 8, 64, 256} {
		root := scaleTree(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := Check(context.Background(), option.Root(root), WithPCIIDs("/nonexistent"))
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Host.Selected) != n {
					b.Fatalf("%d NICs, want %d", len(r.Host.Selected), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/nic")
		})
	}
}

// The scale tree is read as laid out: every port has its path, with the
// card's link and the switch's uplink (the switch's inside is no link), and a budget.
func TestScaleTree(t *testing.T) {
	h, err := Inspect(context.Background(), option.Root(scaleTree(t, 16)))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Selected) != 16 {
		t.Fatalf("%d NICs", len(h.Selected))
	}
	for _, n := range h.Selected {
		if n.Path == nil || len(n.Path.Hops) != 2 || n.Budget == nil || n.Budget.Workload.Ports == 0 {
			t.Fatalf("%s: path %+v budget %+v", n.Name, n.Path, n.Budget)
		}
	}
}

// BenchmarkListNICs is what `nicdiag list` reads (Inspect with
// WithInventoryOnly) over 1 to 256 NICs: linear too.
func BenchmarkListNICs(b *testing.B) {
	for _, n := range []int{1, 8, 64, 256} {
		root := scaleTree(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h, err := Inspect(context.Background(), option.Root(root), WithPCIIDs("/nonexistent"), WithInventoryOnly())
				if err != nil {
					b.Fatal(err)
				}
				if len(h.NICs) != n {
					b.Fatalf("%d NICs, want %d", len(h.NICs), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/nic")
		})
	}
}

// BenchmarkListLive is `nicdiag list`'s library work on this host, pci.ids
// names included.
func BenchmarkListLive(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Inspect(context.Background(), WithInventoryOnly()); err != nil {
			b.Fatal(err)
		}
	}
}
