package nicdiag

// The known-issue table (knownissues.tsv): chips with a documented problem
// that depends on a setting nicdiag reads, each row with its public source.

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nicdiag/nicdiag/internal/text"
)

//go:embed knownissues.tsv
var knownIssuesTSV string

// KnownIssue is one row of the known-issue table.
type KnownIssue struct {
	// Bus is "pci" or "usb"; VendorID and DeviceID are in its ID space
	// (the USB product ID for "usb").
	Bus      string
	VendorID uint16
	DeviceID uint16
	// Revision is the PCI revision ID the row is about; nil for all.
	Revision *uint8
	// Driver is the netdev driver (ethtool -i) the issue is about.
	Driver string
	// Condition is when it bites: IssueEEEActive, IssueASPML1 or
	// IssueBound.
	Condition string
	// Severity is what the row costs when the condition holds.
	Severity string
	// Symptom, Fix and Source are the row's text; Fix may hold IFACE and
	// BDF, which the finding replaces.
	Symptom, Fix, Source string
}

// Known-issue conditions.
const (
	IssueEEEActive = "eee_active" // ethtool --show-eee: enabled - active
	IssueASPML1    = "aspm_l1"    // the function's LnkCtl enables ASPM L1
	IssueBound     = "bound"      // the driver is bound
)

var issueColumns = []string{"bus", "vendor", "device", "revision", "driver", "condition", "severity",
	"symptom", "fix", "source"}

// KnownIssues returns the compiled-in known-issue table.
func KnownIssues() []KnownIssue {
	knownOnce.Do(func() {
		var err error
		knownRows, err = parseKnownIssues(strings.NewReader(knownIssuesTSV))
		if err != nil {
			panic(err) // the table is compiled in; TestKnownIssuesTable reads it
		}
	})
	return slices.Clone(knownRows)
}

var (
	knownOnce sync.Once
	knownRows []KnownIssue
)

// parseKnownIssues reads the table strictly: every malformed row is an
// error naming its line, and so is a row without an https source.
func parseKnownIssues(r io.Reader) ([]KnownIssue, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	var rows []KnownIssue
	header := false
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSuffix(sc.Text(), "\r")
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		fields := strings.Split(s, "\t")
		if !header {
			if !slices.Equal(fields, issueColumns) {
				return nil, fmt.Errorf("knownissues.tsv line %d: header must be the %d columns %s",
					line, len(issueColumns), strings.Join(issueColumns, ","))
			}
			header = true
			continue
		}
		k, err := parseIssueRow(fields)
		if err != nil {
			return nil, fmt.Errorf("knownissues.tsv line %d: %w", line, err)
		}
		rows = append(rows, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("knownissues.tsv line %d: %w", line+1, err)
	}
	if !header {
		return nil, fmt.Errorf("knownissues.tsv: no header")
	}
	return rows, nil
}

func parseIssueRow(f []string) (KnownIssue, error) {
	if len(f) != len(issueColumns) {
		return KnownIssue{}, fmt.Errorf("%d columns, want %d", len(f), len(issueColumns))
	}
	for i, v := range f {
		if v == "" || v != strings.TrimSpace(v) || text.Clean(v) != v {
			return KnownIssue{}, fmt.Errorf("column %s: empty, padded or with control characters", issueColumns[i])
		}
	}
	k := KnownIssue{Bus: f[0], Driver: f[4], Condition: f[5], Severity: f[6], Symptom: f[7], Fix: f[8], Source: f[9]}
	if k.Bus != "pci" && k.Bus != "usb" {
		return k, fmt.Errorf("bus %q", k.Bus)
	}
	for i, p := range []*uint16{&k.VendorID, &k.DeviceID} {
		v, err := parseHexID(f[1+i], 4)
		if err != nil {
			return k, fmt.Errorf("%s: %w", issueColumns[1+i], err)
		}
		*p = uint16(v)
	}
	if f[3] != "*" {
		v, err := parseHexID(f[3], 2)
		if err != nil || k.Bus != "pci" {
			return k, fmt.Errorf("revision %q: 2 hex digits, PCI only", f[3])
		}
		r := uint8(v)
		k.Revision = &r
	}
	switch k.Condition {
	case IssueEEEActive, IssueASPML1:
		if k.Bus != "pci" && k.Condition == IssueASPML1 {
			return k, fmt.Errorf("condition %s on a USB device", k.Condition)
		}
	case IssueBound:
	default:
		return k, fmt.Errorf("condition %q", k.Condition)
	}
	if k.Severity != "warn" && k.Severity != "info" {
		return k, fmt.Errorf("severity %q", k.Severity)
	}
	if !strings.HasPrefix(k.Source, "https://") || strings.ContainsAny(k.Source, " \"<>") {
		return k, fmt.Errorf("source %q: an https URL", k.Source)
	}
	return k, nil
}

// parseHexID reads exactly n lower-case hex digits.
func parseHexID(s string, n int) (uint64, error) {
	if len(s) != n || strings.ToLower(s) != s {
		return 0, fmt.Errorf("%q: want %d lower-case hex digits", s, n)
	}
	return strconv.ParseUint(s, 16, 16)
}
