package exporter_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nicdiag/nicdiag/exporter"
)

// A collector over a snapshot, registered like any other and scraped once.
func ExampleNew() {
	reg := prometheus.NewRegistry()
	reg.MustRegister(exporter.New(exporter.WithRoot("../testdata/snapshots/82576-minipcie-x1")))
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "nicdiag_finding{") {
			fmt.Println(line)
		}
	}
	// Output:
	// nicdiag_finding{code="pcie.bottleneck",severity="warn",subject="enp1s0f0"} 1
	// nicdiag_finding{code="pcie.slot_limited",severity="warn",subject="0000:01:00.0"} 1
}
