package exporter_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/option"
)

// A collector over a snapshot, written out once as a scrape would get it.
func ExampleCollector_WriteMetrics() {
	c := exporter.New(option.Root("../testdata/snapshots/82576-minipcie-x1"))
	var b bytes.Buffer
	if err := c.WriteMetrics(context.Background(), &b); err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "nicdiag_finding{") {
			fmt.Println(line)
		}
	}
	// Output:
	// nicdiag_finding{code="pcie.bottleneck",severity="warn",subject="enp1s0f0"} 1
	// nicdiag_finding{code="pcie.slot_limited",severity="warn",subject="0000:01:00.0"} 1
}

// A check that already ran, written for node_exporter's textfile
// collector.
func ExampleWriteReport() {
	start := time.Now()
	r, err := nicdiag.Check(context.Background(), option.Root("../testdata/snapshots/82576-minipcie-x1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var b bytes.Buffer
	if err := exporter.WriteReport(&b, r, time.Since(start)); err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "nicdiag_up") || strings.HasPrefix(line, "nicdiag_line_rate") {
			fmt.Println(line)
		}
	}
	// Output:
	// nicdiag_line_rate_bytes_per_second{iface="enp1s0f0"} 2.467490247074122e+08
	// nicdiag_line_rate_bytes_per_second{iface="enp1s0f1"} 2.467490247074122e+08
	// nicdiag_up 1
}
