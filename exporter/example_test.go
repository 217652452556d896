package exporter_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/nicdiag/nicdiag/exporter"
)

// A collector over a snapshot, written out once as a scrape would get it.
func ExampleCollector_WriteMetrics() {
	c := exporter.New(exporter.WithRoot("../testdata/snapshots/82576-minipcie-x1"))
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

// Serve runs the exporter's HTTP server until the context ends.
func ExampleServe() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	c := exporter.New(exporter.WithRoot("../testdata/snapshots/82576-minipcie-x1"))
	done := make(chan error, 1)
	go func() { done <- exporter.Serve(ctx, ln, c, exporter.WithMaxConns(16)) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	stop()
	fmt.Println(<-done)
	// Output:
	// 200 OK text/plain; version=0.0.4; charset=utf-8
	// <nil>
}
