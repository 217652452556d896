package exporter

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Request limits. A scrape is one GET of a few hundred bytes with no body.
const (
	// maxHeaderBytes bounds the request line and header fields together;
	// past it the request is answered 431. It also bounds the chunk-size
	// lines and trailers of a chunked body.
	maxHeaderBytes = 16 << 10
	// maxDiscardBytes bounds a request body that is read and discarded so
	// the connection can be kept; a longer one is answered 413 (or, on a
	// route that refuses the request anyway, that refusal) and the
	// connection closed.
	maxDiscardBytes = 64 << 10
)

// requestError is a request Serve refuses: it is answered with status and
// the connection is closed. errors.Is matches two of them by status, so the
// sentinels below name the classes.
type requestError struct {
	status int
	reason string
}

func (e *requestError) Error() string {
	return "exporter: " + strconv.Itoa(e.status) + " " + statusText(e.status) + ": " + e.reason
}

// Is reports whether target is a *requestError of the same status.
func (e *requestError) Is(target error) bool {
	t, ok := target.(*requestError)
	return ok && t.status == e.status
}

// The classes of refused requests, for errors.Is.
var (
	errBadRequest       = &requestError{status: 400, reason: "malformed request"}
	errBodyTooLarge     = &requestError{status: 413, reason: "request body over " + strconv.Itoa(maxDiscardBytes>>10) + " KiB"}
	errExpectation      = &requestError{status: 417, reason: "only Expect: 100-continue is understood"}
	errHeaderTooLarge   = &requestError{status: 431, reason: "request line and headers over " + strconv.Itoa(maxHeaderBytes>>10) + " KiB"}
	errTransferEncoding = &requestError{status: 501, reason: "only Transfer-Encoding: chunked is understood"}
	errVersion          = &requestError{status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are served"}
)

func badRequest(reason string) error { return &requestError{status: 400, reason: reason} }

// request is what the server uses of one HTTP/1.x request head.
type request struct {
	method string
	target string // the request target as sent
	path   string // its path, percent-decoded, without the query; "*" for OPTIONS *
	minor  int    // HTTP/1.minor; a minor above 1 is read as 1

	hosts          int    // Host fields seen
	acceptEncoding string // the Accept-Encoding fields, joined with ", "
	ae             []byte // acceptEncoding while the fields are read
	close          bool   // Connection: close
	keepAlive      bool   // Connection: keep-alive
	expectContinue bool   // Expect: 100-continue, on HTTP/1.1
	contentLength  int64  // -1 without Content-Length
	chunked        bool   // Transfer-Encoding: chunked
}

// hasBody reports whether a body follows the head.
func (r *request) hasBody() bool { return r.chunked || r.contentLength > 0 }

// keepsAlive reports whether the client lets the connection stay open
// after the response: HTTP/1.1 unless it sent Connection: close, HTTP/1.0
// only when it sent Connection: keep-alive.
func (r *request) keepsAlive() bool {
	if r.close {
		return false
	}
	return r.minor >= 1 || r.keepAlive
}

// readRequest reads one request head (request line and header fields) from
// br, at most maxHeaderBytes of it; empty lines before the request line are
// skipped (RFC 9112 §2.2) and count against that bound. A refused request
// is a *requestError; otherwise the error is br's: io.EOF before the first
// byte, io.ErrUnexpectedEOF within the head, or a read error (a timeout).
func readRequest(br *bufio.Reader) (*request, error) {
	budget := maxHeaderBytes
	var line []byte
	var err error
	for len(line) == 0 {
		if line, err = readLine(br, &budget); err != nil {
			return nil, err
		}
	}
	r, err := parseRequestLine(line)
	if err != nil {
		return nil, err
	}
	expectOther := false
	for {
		if line, err = readLine(br, &budget); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if err := r.parseField(line, &expectOther); err != nil {
			return nil, err
		}
	}
	switch {
	case r.hosts > 1:
		return nil, badRequest("more than one Host header field")
	case r.hosts == 0 && r.minor >= 1:
		return nil, badRequest("HTTP/1.1 request without a Host header field")
	case r.chunked && r.contentLength >= 0:
		return nil, badRequest("both Content-Length and Transfer-Encoding")
	case r.chunked && r.minor == 0:
		return nil, badRequest("Transfer-Encoding in an HTTP/1.0 request")
	case expectOther:
		return nil, errExpectation
	}
	r.acceptEncoding, r.ae = string(r.ae), nil
	if r.minor == 0 {
		r.expectContinue = false // RFC 9110 §10.1.1: ignored from HTTP/1.0 clients
	}
	return r, nil
}

// readLine returns the next line of br without its LF or CRLF, charging
// its length, line ending included, to budget; a line over the budget is
// errHeaderTooLarge, and no more than the budget is held in memory. The
// line may point into br's buffer: it is valid until br's next read.
func readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// Longer than br's buffer: gather it, within the budget.
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(long) > *budget {
				return nil, errHeaderTooLarge
			}
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if len(line) > *budget {
		return nil, errHeaderTooLarge
	}
	*budget -= len(line)
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// parseRequestLine parses "METHOD SP TARGET SP HTTP/1.x".
func parseRequestLine(line []byte) (*request, error) {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, proto, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 {
		return nil, badRequest("malformed request line")
	}
	if !isToken(method) {
		return nil, badRequest("malformed method")
	}
	minor, err := parseVersion(proto)
	if err != nil {
		return nil, err
	}
	r := &request{method: internMethod(method), minor: minor, contentLength: -1}
	if len(target) == 0 {
		return nil, badRequest("empty request target")
	}
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return nil, badRequest("request target with a control, space or non-ASCII byte")
		}
	}
	r.target = string(target)
	if r.path, err = targetPath(r.method, r.target); err != nil {
		return nil, err
	}
	return r, nil
}

// internMethod returns the common methods without allocating.
func internMethod(m []byte) string {
	switch string(m) {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	}
	return string(m)
}

// parseVersion parses "HTTP/1.x" into x (1 for any x above 1). Another
// major version is errVersion; anything else a bad request.
func parseVersion(p []byte) (int, error) {
	if len(p) != 8 || string(p[:5]) != "HTTP/" || p[6] != '.' || !isDigit(p[5]) || !isDigit(p[7]) {
		return 0, badRequest("malformed HTTP version")
	}
	if p[5] != '1' {
		return 0, errVersion
	}
	return min(int(p[7]-'0'), 1), nil
}

// targetPath returns the path of a request target: origin-form
// (/metrics?x=1), absolute-form (http://host:9799/metrics), asterisk-form
// (* for OPTIONS) or, for CONNECT, authority-form (host:port; path "").
// The query is dropped and percent-escapes decoded.
func targetPath(method, target string) (string, error) {
	switch {
	case target[0] == '/':
	case target == "*":
		if method != "OPTIONS" {
			return "", badRequest("* is a target for OPTIONS only")
		}
		return "*", nil
	case hasPrefixFold(target, "http://") || hasPrefixFold(target, "https://"):
		_, rest, _ := strings.Cut(target, "://")
		i := strings.IndexAny(rest, "/?")
		if i < 0 {
			i = len(rest)
		}
		if i == 0 {
			return "", badRequest("absolute request target without a host")
		}
		if target = rest[i:]; target == "" || target[0] == '?' {
			target = "/" + target
		}
	case method == "CONNECT":
		return "", nil
	default:
		return "", badRequest("malformed request target")
	}
	target, _, _ = strings.Cut(target, "?")
	return unescapePath(target)
}

// unescapePath decodes the %XX escapes of a path; a malformed escape is a
// bad request.
func unescapePath(p string) (string, error) {
	i := strings.IndexByte(p, '%')
	if i < 0 {
		return p, nil
	}
	b := make([]byte, 0, len(p))
	b = append(b, p[:i]...)
	for ; i < len(p); i++ {
		if p[i] != '%' {
			b = append(b, p[i])
			continue
		}
		if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
			return "", badRequest("malformed percent-escape in the request target")
		}
		b = append(b, unhex(p[i+1])<<4|unhex(p[i+2]))
		i += 2
	}
	return string(b), nil
}

// parseField parses one "Name: value" header line and keeps what the
// server uses. Obsolete line folding, whitespace before the colon and
// control bytes in a value are bad requests (RFC 9112 §5).
func (r *request) parseField(line []byte, expectOther *bool) error {
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok || !isToken(name) {
		return badRequest("malformed header field")
	}
	value = trimOWS(value)
	for _, c := range value {
		if c < ' ' && c != '\t' || c == 0x7f {
			return badRequest("control byte in a header field value")
		}
	}
	switch {
	case equalFold(name, "Host"):
		r.hosts++
		for _, c := range value {
			if !isHostByte(c) {
				return badRequest("malformed Host header field")
			}
		}
	case equalFold(name, "Content-Length"):
		n, err := parseContentLength(value)
		if err != nil {
			return err
		}
		if r.contentLength >= 0 && r.contentLength != n {
			return badRequest("conflicting Content-Length header fields")
		}
		r.contentLength = n
	case equalFold(name, "Transfer-Encoding"):
		if r.chunked || !equalFold(value, "chunked") {
			return errTransferEncoding
		}
		r.chunked = true
	case equalFold(name, "Connection"):
		for tok := range bytes.SplitSeq(value, []byte(",")) {
			tok = trimOWS(tok)
			r.close = r.close || equalFold(tok, "close")
			r.keepAlive = r.keepAlive || equalFold(tok, "keep-alive")
		}
	case equalFold(name, "Expect"):
		switch {
		case equalFold(value, "100-continue"):
			r.expectContinue = true
		case len(value) > 0:
			*expectOther = true
		}
	case equalFold(name, "Accept-Encoding"):
		if len(r.ae) > 0 {
			r.ae = append(r.ae, ", "...)
		}
		r.ae = append(r.ae, value...)
	}
	return nil
}

// parseContentLength parses a Content-Length value: decimal digits, or a
// list of the same number repeated (RFC 9110 §8.6).
func parseContentLength(v []byte) (int64, error) {
	n := int64(-1)
	for part := range bytes.SplitSeq(v, []byte(",")) {
		part = trimOWS(part)
		if len(part) == 0 || len(part) > 18 { // 18 digits cannot overflow
			return 0, badRequest("malformed Content-Length")
		}
		var m int64
		for _, c := range part {
			if !isDigit(c) {
				return 0, badRequest("malformed Content-Length")
			}
			m = m*10 + int64(c-'0')
		}
		if n >= 0 && m != n {
			return 0, badRequest("conflicting Content-Length values")
		}
		n = m
	}
	return n, nil
}

// discardBody reads r's body from br and drops it: at most limit bytes of
// content, and for a chunked body at most maxHeaderBytes of chunk-size
// lines and trailers besides. A longer body is errBodyTooLarge, before its
// content is read where the length is declared; broken chunk framing is a
// bad request; the end of input is io.ErrUnexpectedEOF.
func discardBody(br *bufio.Reader, r *request, limit int64) error {
	if !r.chunked {
		if r.contentLength <= 0 {
			return nil
		}
		if r.contentLength > limit {
			return errBodyTooLarge
		}
		return discardN(br, r.contentLength)
	}
	budget := maxHeaderBytes
	var total int64
	for {
		line, err := readChunkLine(br, &budget)
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions are ignored
		}
		line = trimOWS(line)
		if len(line) == 0 {
			return badRequest("malformed chunk size")
		}
		var size int64
		for _, c := range line {
			if !isHex(c) {
				return badRequest("malformed chunk size")
			}
			if size = size<<4 | int64(unhex(c)); total+size > limit {
				return errBodyTooLarge
			}
		}
		if size == 0 {
			for { // trailer fields, up to the empty line
				if line, err = readChunkLine(br, &budget); err != nil || len(line) == 0 {
					return err
				}
			}
		}
		total += size
		if err := discardN(br, size); err != nil {
			return err
		}
		if line, err = readChunkLine(br, &budget); err != nil {
			return err
		} else if len(line) != 0 {
			return badRequest("chunk data longer than its size")
		}
	}
}

// readChunkLine is readLine for chunk framing: the end of input is
// io.ErrUnexpectedEOF and an over-long line a bad request.
func readChunkLine(br *bufio.Reader, budget *int) ([]byte, error) {
	line, err := readLine(br, budget)
	switch {
	case errors.Is(err, errHeaderTooLarge):
		return nil, badRequest("chunk framing over " + strconv.Itoa(maxHeaderBytes>>10) + " KiB")
	case err == io.EOF:
		return nil, io.ErrUnexpectedEOF
	}
	return line, err
}

// discardN drops n bytes of br.
func discardN(br *bufio.Reader, n int64) error {
	for n > 0 {
		d, err := br.Discard(int(min(n, 1<<20)))
		n -= int64(d)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// isToken reports whether b is a non-empty RFC 9110 token (a method or a
// field name).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c >= 0x80 || !tokenByte[c] {
			return false
		}
	}
	return true
}

var tokenByte = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// isHostByte reports whether c may appear in a Host value: a reg-name, an
// IP literal in brackets, a port (RFC 3986 §3.2).
func isHostByte(c byte) bool {
	return c < 0x80 && tokenByte[c] && c != '^' && c != '`' && c != '|' && c != '#' ||
		c == ':' || c == '[' || c == ']' || c == '(' || c == ')' || c == ',' || c == ';' || c == '=' || c == '@'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// trimOWS trims spaces and tabs at both ends.
func trimOWS(b []byte) []byte { return bytes.Trim(b, " \t") }

// equalFold reports whether b equals the ASCII s, ignoring ASCII case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFold([]byte(s[:len(prefix)]), prefix)
}
