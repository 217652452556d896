package exporter

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// countingReader counts what is read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzReadRequest feeds the request parser and the body reader any bytes,
// as pipelined requests: they must not panic; each head takes at most
// maxHeaderBytes and each body at most maxDiscardBytes besides its
// framing (so memory stays bounded whatever the input); a request read
// is well formed; a failure is a refusal with a status and a reason, or
// the end of input.
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{
		"GET /metrics HTTP/1.1\r\nHost: localhost:9799\r\nAccept-Encoding: gzip\r\nUser-Agent: Prometheus/3.0\r\n\r\n",
		"HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET http://h:1/metrics?x=1 HTTP/1.1\r\nHost: h\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /%6Detrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello",
		"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: v\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n",
		"\r\n\nGET / HTTP/1.1\nHost: x\n\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET / HTTP/1.1\r\nX: \x00\r\n  fold\r\n\r\n",
		"GET / HTTP/9.9\r\n\r\n",
		"G\xffT / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nExpect: 100-continue, x\r\nContent-Length: 99999999999999999999\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	statuses := map[int]bool{400: true, 413: true, 417: true, 431: true, 501: true, 505: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		br := bufio.NewReaderSize(cr, readBufferBytes)
		consumed := func() int { return cr.n - br.Buffered() }
		for range 8 {
			start := consumed()
			r, err := readRequest(br)
			if err == nil {
				if n := consumed() - start; n > maxHeaderBytes {
					t.Fatalf("a head of %d bytes read, over %d", n, maxHeaderBytes)
				}
				checkRequest(t, r)
				if !r.hasBody() {
					continue
				}
				start = consumed()
				err = discardBody(br, r, maxDiscardBytes)
				if n := consumed() - start; n > maxDiscardBytes+maxHeaderBytes {
					t.Fatalf("a body of %d bytes read, over %d and its framing", n, maxDiscardBytes)
				}
				if err == nil {
					continue
				}
			}
			var re *requestError
			switch {
			case errors.As(err, &re):
				if !statuses[re.status] || re.reason == "" || !strings.HasPrefix(re.Error(), "exporter: ") {
					t.Fatalf("refusal %#v: %q", re, re.Error())
				}
			case err != io.EOF && err != io.ErrUnexpectedEOF:
				t.Fatalf("error %v (%T) is neither a refusal nor the end of input", err, err)
			}
			return
		}
	})
}

// checkRequest fails t unless r is a well-formed request.
func checkRequest(t *testing.T, r *request) {
	t.Helper()
	switch {
	case !isToken([]byte(r.method)):
		t.Fatalf("method %q", r.method)
	case r.minor != 0 && r.minor != 1:
		t.Fatalf("HTTP/1.%d", r.minor)
	case r.path == "*" && (r.method != "OPTIONS" || r.target != "*"):
		t.Fatalf("%s %s: path *", r.method, r.target)
	case r.path == "" && r.method != "CONNECT":
		t.Fatalf("%s %s: empty path", r.method, r.target)
	case r.path != "" && r.path != "*" && r.path[0] != '/':
		t.Fatalf("%s %s: path %q", r.method, r.target, r.path)
	case r.minor == 1 && r.hosts != 1, r.hosts > 1:
		t.Fatalf("%d Host fields accepted", r.hosts)
	case r.chunked && r.contentLength != -1, r.contentLength < -1:
		t.Fatalf("framing: chunked %v, Content-Length %d", r.chunked, r.contentLength)
	case r.expectContinue && r.minor == 0:
		t.Fatal("Expect honoured from HTTP/1.0")
	}
}
