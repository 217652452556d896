package pcie

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// aerCorrectable is aer_dev_correctable as Linux 6.x writes it (the format
// of aer_stats_dev_attr in drivers/pci/pcie/aer.c), with an unnamed status
// bit that counted.
const aerCorrectable = `RxErr 3
BadTLP 1
BadDLLP 0
Rollover 0
Timeout 0
NonFatalErr 0
CorrIntErr 0
HeaderOF 0
dev_cor_errs_bit[9] 2
TOTAL_ERR_COR 6
`

const aerFatal = `Undefined 0
DLP 0
SDES 0
TLP 0
FCP 0
CmpltTO 0
CmpltAbrt 0
UnxCmplt 0
RxOF 0
MalfTLP 0
ECRC 0
UnsupReq 0
ACSViol 0
UncorrIntErr 0
BlockedTLP 0
AtomicOpBlocked 0
TLPBlockedErr 0
PoisonTLPBlocked 0
TOTAL_ERR_FATAL 0
`

func TestParseAERCounters(t *testing.T) {
	m, err := ParseAERCounters([]byte(aerCorrectable))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 10 || m[AERCorrectableTotal] != 6 || m["RxErr"] != 3 || m["dev_cor_errs_bit[9]"] != 2 {
		t.Errorf("counters = %v", m)
	}
	m, err = ParseAERCounters([]byte(aerFatal))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m[AERFatalTotal]; !ok || v != 0 || len(m) != 19 {
		t.Errorf("counters = %v", m)
	}
	// The largest count the kernel can print (u64), with no final newline.
	m, err = ParseAERCounters([]byte("TOTAL_ERR_NONFATAL 18446744073709551615"))
	if err != nil || m[AERNonFatalTotal] != 1<<64-1 {
		t.Errorf("max count: %v, %v", m, err)
	}
}

func TestParseAERCountersErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no counters"},
		{"\n", "no counters"},
		{"RxErr\n", "line 1: want NAME COUNT"},
		{"RxErr 1 2\n", "line 1: want NAME COUNT"},
		{"RxErr 0\n\nTOTAL_ERR_COR 0\n", "line 2: want NAME COUNT"},
		{"RxErr -1\n", "line 1: count is not a decimal number"},
		{"RxErr 0x10\n", "line 1: count is not a decimal number"},
		{"RxErr 18446744073709551616\n", "line 1: count is not a decimal number"},
		{"RxErr 1\nRxErr 2\n", `line 2: "RxErr" repeated`},
		{manyLines(65), "more than 64 lines"},
	} {
		m, err := ParseAERCounters([]byte(tc.in))
		var ae *AERError
		if err == nil || m != nil || !errors.Is(err, ErrBadAER) || !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, %v; want an *AERError with %q", tc.in, m, err, tc.want)
		}
	}
}

func manyLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "dev_cor_errs_bit[%d] 1\n", i)
	}
	return b.String()
}

func FuzzAERCounters(f *testing.F) {
	for _, s := range []string{aerCorrectable, aerFatal, "", "TOTAL_ERR_COR 1", "a 1\na 2\n", "x \x00 1\n", "RxErr 99999999999999999999\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseAERCounters(b)
		if err != nil {
			var ae *AERError
			if m != nil || !errors.Is(err, ErrBadAER) || !errors.As(err, &ae) {
				t.Fatalf("%q: %v, %v", b, m, err)
			}
			return
		}
		if len(m) == 0 || len(m) > maxAERLines {
			t.Fatalf("%q: %d counters", b, len(m))
		}
		for name := range m {
			if name == "" || strings.ContainsAny(name, " \t\n") || !strings.Contains(string(b), name) {
				t.Fatalf("%q: name %q", b, name)
			}
		}
	})
}

// FuzzAERTotal: AERTotal accepts and refuses what ParseAERCounters does,
// with the same errors, and finds the same totals.
func FuzzAERTotal(f *testing.F) {
	for _, s := range []string{aerCorrectable, aerFatal, "", "\n", "TOTAL_ERR_COR 1", "a 1\na 2\n", "x \x00 1\n", "RxErr 99999999999999999999\n",
		"RxErr\u00a01\n", "RxErr\u20281\n", "a 1\n\nb 2\n", "a 1\n \n", "\xff 1\n", "a\v1\f\n", manyLines(64), manyLines(65)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseAERCounters(b)
		for _, total := range []string{AERCorrectableTotal, AERNonFatalTotal, AERFatalTotal, "a"} {
			v, ok, terr := AERTotal(b, total)
			w, wok := m[total]
			if fmt.Sprint(terr) != fmt.Sprint(err) || v != w || ok != wok {
				t.Fatalf("%q %s: %d %v %v; ParseAERCounters %d %v %v", b, total, v, ok, terr, w, wok, err)
			}
			if terr != nil && !errors.Is(terr, ErrBadAER) {
				t.Fatalf("%q: %v", b, terr)
			}
		}
	})
}

func TestAERTotalAllocs(t *testing.T) {
	b := []byte(aerFatal)
	if n := testing.AllocsPerRun(100, func() { AERTotal(b, AERFatalTotal) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
