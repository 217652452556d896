package exporter

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Site answers the exporter's requests, apart from reading them off a
// connection and writing the answer back: the landing page on /, the
// exposition on /metrics (at most WithMaxScrapes scrapes at once, each
// waiting at most WithScrapeTimeout, gzipped when the client accepts it),
// and the refusals. Serve puts a Site behind its own HTTP/1.1 server;
// exporterhttp.Handler puts one behind net/http. A Site is safe for
// concurrent use.
type Site struct {
	c       *Collector
	slots   chan struct{}
	timeout time.Duration // a scrape's wait for a check
	write   time.Duration // writing one response
	busy    Response      // the 503 past the scrape cap
	late    Response      // the 503 past the scrape timeout
}

// NewSite returns the Site that Serve serves for c, with the scrape cap
// (WithMaxScrapes), the scrape timeout (WithScrapeTimeout) and the write
// timeout (WithWriteTimeout) of opts; the other options concern
// connections and are Serve's.
func NewSite(c *Collector, opts ...ServerOption) *Site {
	return newSite(c, newServerConfig(opts))
}

func newSite(c *Collector, s serverConfig) *Site {
	return &Site{
		c: c, slots: make(chan struct{}, s.maxScrapes), timeout: s.scrapeTimeout, write: s.write,
		busy: unavailable("too many scrapes at once (" + strconv.Itoa(s.maxScrapes) + "); try again later"),
		late: unavailable("no check result within " + s.scrapeTimeout.String() + "; the check goes on, try again later"),
	}
}

// WriteTimeout is how long writing one response may take once Respond has
// returned it (WithWriteTimeout); a client that reads slower is to be
// disconnected.
func (s *Site) WriteTimeout() time.Duration { return s.write }

// Field is one header field of a Response.
type Field struct {
	Name, Value string
}

// Response is the answer to one request.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header lists the header fields, in order. The server adds
	// Content-Length (len(Body), also for HEAD), Date and Connection.
	Header []Field
	// Body is the whole body, also for HEAD, whose answer leaves it out.
	// It may be shared with other responses and must not be modified.
	Body []byte
}

// Header fields of the responses; shared, never modified.
var (
	plainHeader   = []Field{{"Content-Type", ContentType}, {"Vary", "Accept-Encoding"}}
	gzipHeader    = []Field{{"Content-Type", ContentType}, {"Vary", "Accept-Encoding"}, {"Content-Encoding", "gzip"}}
	landingHeader = []Field{{"Content-Type", "text/html; charset=utf-8"}}
	textHeader    = []Field{{"Content-Type", "text/plain; charset=utf-8"}, {"X-Content-Type-Options", "nosniff"}}
	optionsHeader = []Field{{"Allow", allowed}}
	allowHeader   = []Field{{"Content-Type", "text/plain; charset=utf-8"}, {"X-Content-Type-Options", "nosniff"}, {"Allow", allowed}}
	retryHeader   = []Field{{"Content-Type", "text/plain; charset=utf-8"}, {"X-Content-Type-Options", "nosniff"}, {"Retry-After", retryAfter}}
)

// allowed is the Allow header of a 405: the methods the routes serve.
const allowed = "GET, HEAD"

// retryAfter is the Retry-After of a 503, in seconds.
const retryAfter = "1"

// landing is the page on /: where the metrics are.
const landing = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>nicdiag exporter</title></head>
<body>
<h1>nicdiag exporter</h1>
<p>NIC, PCIe and IRQ verdicts of <code>nicdiag check</code> for Prometheus: <a href="metrics">/metrics</a>.</p>
</body>
</html>
`

var (
	landingBody     = []byte(landing)
	notFoundBody    = []byte("404 page not found\n")
	notAllowedBody  = []byte("Method Not Allowed\n")
	notImplemented  = []byte("501 method not implemented\n")
	methodsStandard = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
)

// Respond answers a request with method (as sent: methods are
// case-sensitive) for path (the request target's path, percent-decoded,
// without the query) whose Accept-Encoding header is acceptEncoding (""
// when absent). GET and HEAD of / are the landing page; of /metrics the
// exposition, or 503 with Retry-After: 1 when WithMaxScrapes scrapes are
// already in flight or no check ends within WithScrapeTimeout or before ctx
// does. Another path is 404, another standard method 405 with Allow: GET,
// HEAD, a method that is not standard 501; OPTIONS * is 200.
func (s *Site) Respond(ctx context.Context, method, path, acceptEncoding string) Response {
	switch {
	case !isStandardMethod(method):
		return Response{Status: 501, Header: textHeader, Body: notImplemented}
	case method == "OPTIONS" && path == "*":
		return Response{Status: 200, Header: optionsHeader}
	case path != "/" && path != "/metrics":
		return Response{Status: 404, Header: textHeader, Body: notFoundBody}
	case method != "GET" && method != "HEAD":
		return Response{Status: 405, Header: allowHeader, Body: notAllowedBody}
	case path == "/":
		return Response{Status: 200, Header: landingHeader, Body: landingBody}
	}
	return s.metrics(ctx, acceptEncoding)
}

// serves reports whether Respond answers method and path with a page
// rather than a refusal.
func serves(method, path string) bool {
	return (method == "GET" || method == "HEAD") && (path == "/" || path == "/metrics")
}

// metrics answers a scrape. It holds one of the slots while it waits for
// the check result, and none while the response is written.
func (s *Site) metrics(ctx context.Context, acceptEncoding string) Response {
	select {
	case s.slots <- struct{}{}:
	default:
		return s.busy
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	p, err := s.c.current(ctx)
	cancel()
	gz := acceptsGzip(acceptEncoding)
	var body []byte
	if err == nil {
		body = p.text
		if gz {
			body = p.gzipped()
		}
	}
	<-s.slots
	switch {
	case err != nil:
		return s.late
	case gz:
		return Response{Status: 200, Header: gzipHeader, Body: body}
	}
	return Response{Status: 200, Header: plainHeader, Body: body}
}

// unavailable is a 503 with a one-line reason.
func unavailable(why string) Response {
	return Response{Status: 503, Header: retryHeader, Body: []byte(why + "\n")}
}

func isStandardMethod(m string) bool {
	for _, s := range methodsStandard {
		if m == s {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header value lists gzip
// with a weight above 0.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || q <= 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}

// statusText is the reason phrase of the status codes the server sends.
func statusText(code int) string {
	switch code {
	case 100:
		return "Continue"
	case 200:
		return "OK"
	case 400:
		return "Bad Request"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 413:
		return "Content Too Large"
	case 417:
		return "Expectation Failed"
	case 431:
		return "Request Header Fields Too Large"
	case 501:
		return "Not Implemented"
	case 503:
		return "Service Unavailable"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Status " + strconv.Itoa(code)
}
