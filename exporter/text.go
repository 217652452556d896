package exporter

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ContentType is the media type of the exposition Exposition returns and
// WriteMetrics writes: the Prometheus text format, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// family is one metric family: its name, type, HELP and label names.
type family struct {
	name, kind, help string // kind is gauge or counter
	labels           []string
	order            []int // indexes into labels, sorted by label name
}

func newFamily(name, kind, help string, labels ...string) *family {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return &family{name: name, kind: kind, help: help, labels: labels, order: order}
}

// sample is one series of a family: its label values, in the family's
// label order, and its value.
type sample struct {
	f      *family
	values []string
	v      float64
}

// compareSamples orders samples as client_golang's registry did: by
// family name, then by label values taken in the order of sorted label
// names.
func compareSamples(a, b sample) int {
	if c := strings.Compare(a.f.name, b.f.name); c != 0 {
		return c
	}
	for _, i := range a.f.order {
		if c := strings.Compare(a.values[i], b.values[i]); c != 0 {
			return c
		}
	}
	return 0
}

// render writes samples in the text format 0.0.4: families sorted by name,
// each with its HELP and TYPE, series sorted by label values, labels sorted
// by name. A family without series is left out; a series repeated with the
// same labels is written once, the first time.
func render(samples []sample) []byte {
	slices.SortStableFunc(samples, compareSamples)
	var b bytes.Buffer
	var prev *sample
	for i := range samples {
		s := &samples[i]
		if prev != nil && prev.f == s.f && compareSamples(*prev, *s) == 0 {
			continue
		}
		if prev == nil || prev.f != s.f {
			b.WriteString("# HELP ")
			b.WriteString(s.f.name)
			b.WriteByte(' ')
			writeEscaped(&b, s.f.help, false)
			b.WriteString("\n# TYPE ")
			b.WriteString(s.f.name)
			b.WriteByte(' ')
			b.WriteString(s.f.kind)
			b.WriteByte('\n')
		}
		b.WriteString(s.f.name)
		if len(s.values) > 0 {
			b.WriteByte('{')
			for n, i := range s.f.order {
				if n > 0 {
					b.WriteByte(',')
				}
				b.WriteString(s.f.labels[i])
				b.WriteString(`="`)
				writeEscaped(&b, s.values[i], true)
				b.WriteByte('"')
			}
			b.WriteByte('}')
		}
		b.WriteByte(' ')
		b.Write(appendValue(b.AvailableBuffer(), s.v))
		b.WriteByte('\n')
		prev = s
	}
	return b.Bytes()
}

// writeEscaped writes s as the text format asks: a backslash as \\ and a
// line feed as \n, and in a label value a double quote as \". Bytes that
// are not UTF-8 become U+FFFD, since the format is UTF-8.
func writeEscaped(b *bytes.Buffer, s string, quote bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
}

// appendValue formats v as Prometheus' text encoder does: NaN, +Inf and
// -Inf by name, -0 as 0, otherwise the shortest form that reads back as v
// ('g': 27 and 0.5 stay plain, 1.25e+08 takes an exponent).
func appendValue(dst []byte, v float64) []byte {
	switch {
	case v == 0:
		return append(dst, '0')
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case math.IsInf(v, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-Inf"...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}
