package exporterhttp_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/exporter/exporterhttp"
	"github.com/nicdiag/nicdiag/option"
)

// The exporter mounted in a program's own mux, next to its other routes.
func ExampleHandler() {
	c := exporter.New(option.Root("../../testdata/snapshots/82576-minipcie-x1"))
	mux := http.NewServeMux()
	mux.Handle("/metrics", exporterhttp.Handler(c, exporterhttp.WithMaxScrapes(2)))
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

// A Server with the exporter's timeouts and connection cap, shut down
// when done.
func ExampleNewServer() {
	c := exporter.New(option.Root("../../testdata/snapshots/82576-minipcie-x1"))
	s := exporterhttp.NewServer(c, exporterhttp.WithMaxConns(16))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	hs := s.HTTPServer()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(s.Listener(ln)) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	hs.Shutdown(context.Background())
	fmt.Println(<-done)
	// Output:
	// 200 OK
	// http: Server closed
}
