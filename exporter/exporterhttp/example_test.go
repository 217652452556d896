package exporterhttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/exporter/exporterhttp"
)

// The exporter mounted in a program's own mux, next to its other routes.
func ExampleHandler() {
	c := exporter.New(exporter.WithRoot("../../testdata/snapshots/82576-minipcie-x1"))
	mux := http.NewServeMux()
	mux.Handle("/metrics", exporterhttp.Handler(c, exporter.WithMaxScrapes(2)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	// Output:
	// 200 OK text/plain; version=0.0.4; charset=utf-8
}
