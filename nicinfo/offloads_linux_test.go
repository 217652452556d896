package nicinfo

import (
	"context"
	"io"
	"os"
	"testing"
	"unsafe"

	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/safchain/ethtool"
)

// struct ethtool_sset_info is 16 bytes before its data[].
func TestSsetInfoLayout(t *testing.T) {
	if got := unsafe.Offsetof(ssetInfo{}.data); got != 16 {
		t.Errorf("data at %d, want 16", got)
	}
	if got := unsafe.Offsetof(ssetInfo{}.mask); got != 8 {
		t.Errorf("mask at %d, want 8", got)
	}
}

// The real kernel's answers for a veth in a throwaway namespace, through
// the live reader: GRO can be toggled (a soft feature every netdev has),
// LRO is fixed off, turning transmit checksumming off makes the kernel
// drop TSO (requested on, active off: netdev_fix_features), and veth has
// no coalescing (operation not supported, no Coalesce). Each change is
// made with safchain/ethtool's ETHTOOL_SFEATURES and read back.
func TestLiveFeaturesVeth(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	ns := netnstest.New(t)
	netnstest.Veth(t, netnstest.Handle(t, ns), "ndoff0", "ndoff1")
	ctx := context.Background()
	netnstest.Do(t, ns, func() {
		src := LiveEthtool()
		defer src.(io.Closer).Close()
		et, err := ethtool.NewEthtool()
		if err != nil {
			t.Error(err)
			return
		}
		defer et.Close()
		// t.Fatal belongs to the test's goroutine: here a failure returns.
		read := func() *EthtoolAnswers {
			a, err := src.Answers(ctx, "ndoff0")
			if err != nil {
				t.Error(err)
				return nil
			}
			return a
		}
		a := read()
		if a == nil {
			return
		}
		gro, ok := a.Features[FeatureGRO]
		if !ok || gro.Fixed {
			t.Errorf("rx-gro %+v (present %v): every netdev can toggle GRO", gro, ok)
			return
		}
		if lro := a.Features[FeatureLRO]; lro.Active || !lro.Fixed {
			t.Errorf("rx-lro %+v: veth has no LRO", lro)
		}
		if tso := a.Features[FeatureTSO]; !tso.Active || tso.Fixed {
			t.Errorf("tx-tcp-segmentation %+v", tso)
		}
		if a.Coalesce != nil || a.Errors["coalesce"] != "operation not supported" {
			t.Errorf("coalesce %+v, error %q", a.Coalesce, a.Errors["coalesce"])
		}
		if len(a.Features) != len(JudgedFeatures) {
			t.Errorf("%d of the %d judged features: %v", len(a.Features), len(JudgedFeatures), a.Features)
		}

		if err := et.Change("ndoff0", map[string]bool{FeatureGRO: !gro.Active, FeatureTXChecksumIP: false}); err != nil {
			t.Error(err)
			return
		}
		b := read()
		if b == nil {
			return
		}
		t.Logf("before: %v\nafter: %v", a.Features, b.Features)
		if g := b.Features[FeatureGRO]; g.Active != !gro.Active || g.Requested != !gro.Active || g.Fixed {
			t.Errorf("after toggling GRO from %v: %+v", gro.Active, g)
		}
		if c := b.Features[FeatureTXChecksumIP]; c.Active || c.Requested {
			t.Errorf("tx-checksum-ip-generic %+v after turning it off", c)
		}
		if tso := b.Features[FeatureTSO]; tso.Active || !tso.Requested {
			t.Errorf("tx-tcp-segmentation %+v: the kernel drops TSO without a checksum feature", tso)
		}

		if err := et.Change("ndoff0", map[string]bool{FeatureGRO: gro.Active, FeatureTXChecksumIP: true}); err != nil {
			t.Error(err)
			return
		}
		if c := read(); c != nil && (c.Features[FeatureGRO] != a.Features[FeatureGRO] || !c.Features[FeatureTSO].Active) {
			t.Errorf("after undoing: %v", c.Features)
		}
	})
}

// struct ethtool_coalesce is 23 words: safchain/ethtool's independent
// layout of it agrees.
func TestCoalesceIoctlLayout(t *testing.T) {
	if got := unsafe.Sizeof(ethtool.Coalesce{}); got != coalesceWords*4 {
		t.Errorf("safchain's Coalesce is %d bytes, coalesceWords says %d", got, coalesceWords*4)
	}
}

// On this host's interfaces that have coalescing, the legacy ioctl (the
// fallback for kernels without ethtool netlink) reads what netlink reads,
// field for field where netlink has the field.
func TestCoalesceIoctlAgreesWithNetlink(t *testing.T) {
	names, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Skip(err)
	}
	l := &liveEthtool{}
	if err := l.open(); err != nil {
		t.Skip(err)
	}
	defer l.Close()
	compared := 0
	for _, e := range names {
		nlc, err := l.coalesce(e.Name())
		if err != nil || l.nl.err != nil {
			continue
		}
		ioc, err := l.gcoalesce(e.Name())
		if err != nil {
			t.Errorf("%s: netlink answers, the ioctl fails: %v", e.Name(), err)
			continue
		}
		for _, f := range []struct {
			name   string
			nl, io *uint32
		}{{"rx_usecs", nlc.RXUsecs, ioc.RXUsecs}, {"rx_frames", nlc.RXFrames, ioc.RXFrames}, {"tx_usecs", nlc.TXUsecs, ioc.TXUsecs}, {"tx_frames", nlc.TXFrames, ioc.TXFrames}} {
			if f.nl != nil && *f.nl != *f.io {
				t.Errorf("%s %s: netlink %d, ioctl %d", e.Name(), f.name, *f.nl, *f.io)
			}
		}
		if nlc.AdaptiveRX != nil && *nlc.AdaptiveRX != *ioc.AdaptiveRX {
			t.Errorf("%s adaptive_rx: netlink %v, ioctl %v", e.Name(), *nlc.AdaptiveRX, *ioc.AdaptiveRX)
		}
		compared++
	}
	if compared == 0 {
		t.Skip("no interface here has coalescing")
	}
	t.Logf("%d interface(s) compared", compared)
}
