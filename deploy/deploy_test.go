// Package deploy holds what runs nicdiag across a fleet: Prometheus rules
// (prometheus/), a Grafana dashboard (grafana/), systemd units for
// nicdiag_exporter and for the textfile mode (systemd/), and an example
// web configuration for the exporter's TLS and basic auth
// (web-config.yml). It has no Go code; its tests check those files against
// what the exporter really serves and what its commands really accept.
package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/exporter/exporterhttp"
	"github.com/nicdiag/nicdiag/option"
)

const (
	rulesFile     = "prometheus/nicdiag.rules.yml"
	rulesTestFile = "prometheus/nicdiag.rules.test.yml"
	dashboardFile = "grafana/nicdiag.json"
)

// nodeExporterNames are the node_exporter series the rules and the
// dashboard use: nicdiag exports no packet counters of its own, and the
// textfile collector says when nicdiag.prom was written.
var nodeExporterNames = []string{
	"node_textfile_mtime_seconds",
	"node_network_receive_bytes_total",
	"node_network_receive_drop_total",
	"node_network_receive_packets_total",
}

// prometheusNames are series Prometheus itself makes for every target.
var prometheusNames = []string{"up"}

// exportedNames scrapes the exporter over every bundled snapshot, as
// Prometheus would, and returns the metric names it serves.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	snaps, err := filepath.Glob("../testdata/snapshots/*/sys")
	if err != nil || len(snaps) < 10 {
		t.Fatalf("bundled snapshots: %v, %v", snaps, err)
	}
	names := map[string]bool{}
	for _, sys := range snaps {
		srv := httptest.NewServer(exporterhttp.Handler(exporter.New(option.Root(filepath.Dir(sys)))))
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			srv.Close()
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		srv.Close()
		if err != nil {
			t.Fatalf("%s: %v", sys, err)
		}
		for name := range fams {
			names[name] = true
		}
	}
	for _, must := range []string{"nicdiag_up", "nicdiag_finding", "nicdiag_ceiling_bytes_per_second", "nicdiag_queue_irq_effective_cpu"} {
		if !names[must] {
			t.Fatalf("the scrape lacks %s: %v", must, names)
		}
	}
	return names
}

// PromQL keywords (aggregations too: `sum by (x) (...)` puts no
// parenthesis right after sum) and the label-list clauses whose
// parentheses hold label names, not series.
var (
	promqlKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true, "Inf": true, "NaN": true, "atan2": true,
		"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
		"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true}
	labelListClauses = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
)

// metricNames returns the series names a PromQL expression selects: the
// identifiers that are not functions, keywords, label lists, label
// matchers, strings, ranges, numbers or Grafana variables.
func metricNames(expr string) ([]string, error) {
	s, err := blankLiterals(expr)
	if err != nil {
		return nil, err
	}
	return seriesWords(s), nil
}

// blankLiterals returns expr with its strings, label matchers and ranges
// blanked and its Grafana variables made numbers.
func blankLiterals(expr string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; c {
		case '"', '\'', '`':
			j := i + 1
			for ; j < len(expr) && expr[j] != c; j++ {
				if expr[j] == '\\' && c != '`' {
					j++
				}
			}
			if j >= len(expr) {
				return "", fmt.Errorf("unterminated string in %q", expr)
			}
			i = j
			b.WriteString(" ")
		case '{', '[':
			end := map[byte]byte{'{': '}', '[': ']'}[c]
			j := strings.IndexByte(expr[i:], end)
			if j < 0 {
				return "", fmt.Errorf("unbalanced %c in %q", c, expr)
			}
			// A matcher's strings may hold the closing brace: skip them.
			k := i + 1
			for ; k < len(expr) && expr[k] != end; k++ {
				if q := expr[k]; q == '"' || q == '\'' || q == '`' {
					for k++; k < len(expr) && expr[k] != q; k++ {
						if expr[k] == '\\' && q != '`' {
							k++
						}
					}
				}
			}
			if k >= len(expr) {
				return "", fmt.Errorf("unbalanced %c in %q", c, expr)
			}
			i = k
			b.WriteString(" ")
		case '$':
			j := i + 1
			for j < len(expr) && (isIdent(expr[j]) || expr[j] == '{' || expr[j] == '}') {
				j++
			}
			i = j - 1
			b.WriteString(" 1 ")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// seriesWords returns the identifiers of s, blanked by blankLiterals, that
// are not functions, keywords or label lists.
func seriesWords(s string) []string {
	var names []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c == '.':
			for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			word := s[i:j]
			k := j
			for k < len(s) && s[k] == ' ' || k < len(s) && (s[k] == '\n' || s[k] == '\t') {
				k++
			}
			call := k < len(s) && s[k] == '('
			switch {
			case labelListClauses[word] && call:
				depth := 0
				for ; k < len(s); k++ {
					if s[k] == '(' {
						depth++
					} else if s[k] == ')' {
						if depth--; depth == 0 {
							break
						}
					}
				}
				j = k + 1
			case promqlKeywords[word], call:
			default:
				names = append(names, word)
			}
			i = j
		default:
			i++
		}
	}
	return names
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string]string{
		`nicdiag_ceiling_bytes_per_second{estimate="nominal"} / on(job, instance, iface) group_left nicdiag_line_rate_bytes_per_second`:                                    "nicdiag_ceiling_bytes_per_second nicdiag_line_rate_bytes_per_second",
		`count by (instance, cpu) (nicdiag_queue_irq_effective_cpu{instance=~"$instance"})`:                                                                                "nicdiag_queue_irq_effective_cpu",
		`label_replace(8 * rate(node_network_receive_bytes_total[$__rate_interval]), "host", "$1", "instance", "(.+?)(?::[0-9]+)?") * on(host, device) group_left() x:y:z`: "node_network_receive_bytes_total x:y:z",
		`absent(nicdiag_up) or up{job="a}b"} == 0 and sum(a) by (le) > 1e9`:                                                                                                "nicdiag_up up a",
		`increase(nicdiag_check_errors_total[1h] offset 5m) > bool 0`:                                                                                                      "nicdiag_check_errors_total",
	} {
		got, err := metricNames(expr)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("metricNames(%q) = %q, %v; want %q", expr, got, err, want)
		}
	}
}

// checkNames fails the test for every name in expr outside allowed, and
// when expr names no series at all.
func checkNames(t *testing.T, where, expr string, allowed map[string]bool) {
	t.Helper()
	names, err := metricNames(expr)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	if len(names) == 0 {
		t.Errorf("%s: no series in %q", where, expr)
	}
	for _, n := range names {
		if !allowed[n] {
			t.Errorf("%s: %s is neither exported by nicdiag nor in the allowed list (%q)", where, n, expr)
		}
	}
}

// ---- the rules ----

type rulesDoc struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Record      string            `yaml:"record"`
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func loadRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc rulesDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []rule
	for _, g := range doc.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		t.Fatal("no rules")
	}
	return out
}

// templateQueries are the PromQL queries an annotation template runs
// (`printf "QUERY" ARGS | query`), with each %q verb as a string.
var (
	printfRe = regexp.MustCompile(`printf ("(?:[^"\\]|\\.)*")`)
	verbRe   = regexp.MustCompile(`%(\[[0-9]+\])?q`)
)

func templateQueries(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, m := range printfRe.FindAllStringSubmatch(text, -1) {
		s, err := strconv.Unquote(m[1])
		if err != nil {
			t.Errorf("printf literal %s: %v", m[1], err)
			continue
		}
		out = append(out, verbRe.ReplaceAllString(s, `"x"`))
	}
	return out
}

// Every rule selects only series nicdiag exports, node_exporter's listed
// ones, up, or a series the file records; every alert has a severity, a
// for, a summary and a description, and says its numbers in humanized
// units where it has numbers.
func TestRules(t *testing.T) {
	exported := exportedNames(t)
	rules := loadRules(t)
	allowed := map[string]bool{}
	for n := range exported {
		allowed[n] = true
	}
	for _, n := range append(nodeExporterNames, prometheusNames...) {
		allowed[n] = true
	}
	recordRe := regexp.MustCompile(`^[a-z_]+:[a-z_]+:[a-z0-9_]+$`)
	for _, r := range rules {
		if r.Record != "" {
			allowed[r.Record] = true
			if !recordRe.MatchString(r.Record) {
				t.Errorf("recording rule %s is not named level:metric:operations", r.Record)
			}
		}
	}
	alerts := 0
	for _, r := range rules {
		name := r.Record + r.Alert
		checkNames(t, name, r.Expr, allowed)
		if r.Alert == "" {
			continue
		}
		alerts++
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity %q, want critical, warning or info", name, r.Labels["severity"])
		}
		if r.For == "" {
			t.Errorf("%s: no for: duration", name)
		}
		for _, a := range []string{"summary", "description"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s: no %s annotation", name, a)
			}
		}
		for a, text := range r.Annotations {
			for _, q := range templateQueries(t, text) {
				checkNames(t, name+" annotation "+a, q, allowed)
			}
			if strings.Contains(text, "| value }}") && !strings.Contains(text, "humanize") {
				t.Errorf("%s: %s prints a raw value; humanize it", name, a)
			}
		}
		if d := r.Annotations["description"]; strings.Contains(d, "| query") && !strings.Contains(d, "humanize") {
			t.Errorf("%s: description has numbers but no humanize", name)
		}
	}
	if alerts < 7 {
		t.Errorf("%d alerts, want the 7 of deploy/prometheus", alerts)
	}
}

type rulesTestDoc struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		PromQLExprTest []struct {
			Expr       string `yaml:"expr"`
			ExpSamples []any  `yaml:"exp_samples"`
		} `yaml:"promql_expr_test"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// The promtool unit tests cover every alert both firing and not firing,
// and every recording rule with samples.
func TestRulesTestsCoverEveryRule(t *testing.T) {
	b, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc rulesTestDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.RuleFiles) != 1 || doc.RuleFiles[0] != filepath.Base(rulesFile) {
		t.Errorf("rule_files %v, want [%s]", doc.RuleFiles, filepath.Base(rulesFile))
	}
	firing, quiet, recorded := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, tc := range doc.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
		for _, p := range tc.PromQLExprTest {
			if len(p.ExpSamples) > 0 {
				recorded[strings.FieldsFunc(p.Expr, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
			}
		}
	}
	for _, r := range loadRules(t) {
		switch {
		case r.Alert != "" && !firing[r.Alert]:
			t.Errorf("no test where %s fires", r.Alert)
		case r.Alert != "" && !quiet[r.Alert]:
			t.Errorf("no test where %s stays quiet", r.Alert)
		case r.Record != "" && !recorded[r.Record]:
			t.Errorf("no promql_expr_test with samples of %s", r.Record)
		}
	}
}

// promtool checks and unit-tests the rules, where it is installed (Debian
// package prometheus; .ci/run installs it).
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): rules not checked")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(promtool, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("check", "rules", rulesFile)
	run("test", "rules", rulesTestFile)
}

// ---- the dashboard ----

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashPanel struct {
	ID         int     `json:"id"`
	Type       string  `json:"type"`
	Title      string  `json:"title"`
	Datasource *dsRef  `json:"datasource"`
	GridPos    gridPos `json:"gridPos"`
	Targets    []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource *dsRef `json:"datasource"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

type gridPos struct{ X, Y, W, H int }

type dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	SchemaVersion int         `json:"schemaVersion"`
	Panels        []dashPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
			Datasource *dsRef          `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// queryPanels flattens rows (their own panels too) and returns the panels
// that query.
func queryPanels(ps []dashPanel) []dashPanel {
	var out []dashPanel
	for _, p := range ps {
		if p.Type == "row" {
			out = append(out, queryPanels(p.Panels)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

var labelValuesRe = regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

// The dashboard: a recent schema, the datasource and instance variables,
// unique ids, every panel on the variable's Prometheus data source with a
// query, and every query selecting only series nicdiag (or node_exporter,
// as listed) serves.
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	exported := exportedNames(t)
	allowed := map[string]bool{}
	for n := range exported {
		allowed[n] = true
	}
	for _, n := range nodeExporterNames {
		allowed[n] = true
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want at least 36", d.SchemaVersion)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q, title %q", d.UID, d.Title)
	}
	checkDashVariables(t, &d, allowed)

	ids := map[int]string{}
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup || p.ID == 0 {
				t.Errorf("panel id %d of %q (also %q)", p.ID, p.Title, prev)
			}
			ids[p.ID] = p.Title
			walk(p.Panels)
		}
	}
	walk(d.Panels)

	panels := queryPanels(d.Panels)
	types := map[string]bool{}
	for _, p := range panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		types[p.Type] = true
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: datasource %+v, want prometheus ${datasource}", where, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no targets", where)
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: gridPos %+v", where, p.GridPos)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("%s: refId %q empty or repeated", where, tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
				t.Errorf("%s %s: datasource %+v", where, tg.RefID, tg.Datasource)
			}
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s %s: no expr", where, tg.RefID)
				continue
			}
			checkNames(t, where+" "+tg.RefID, tg.Expr, allowed)
		}
	}
	for _, want := range []string{"table", "bargauge", "state-timeline", "timeseries"} {
		if !types[want] {
			t.Errorf("no %s panel", want)
		}
	}
}

// checkDashVariables: the dashboard's variables are a Prometheus
// datasource and label_values queries over series in allowed.
func checkDashVariables(t *testing.T, d *dashboard, allowed map[string]bool) {
	t.Helper()
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		if _, dup := vars[v.Name]; dup {
			t.Errorf("variable %s twice", v.Name)
		}
		vars[v.Name] = v.Type
		switch v.Type {
		case "datasource":
			var q string
			if json.Unmarshal(v.Query, &q) != nil || q != "prometheus" {
				t.Errorf("variable %s: query %s, want prometheus", v.Name, v.Query)
			}
		case "query":
			if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
				t.Errorf("variable %s: datasource %+v, want ${datasource}", v.Name, v.Datasource)
			}
			var q struct {
				Query string `json:"query"`
			}
			if json.Unmarshal(v.Query, &q) != nil || q.Query == "" {
				if json.Unmarshal(v.Query, &q.Query) != nil {
					t.Errorf("variable %s: query %s", v.Name, v.Query)
				}
			}
			m := labelValuesRe.FindStringSubmatch(q.Query)
			if m == nil {
				t.Errorf("variable %s: query %q is not label_values(SERIES, LABEL)", v.Name, q.Query)
				continue
			}
			checkNames(t, "variable "+v.Name, m[1], allowed)
		}
	}
	if vars["datasource"] != "datasource" || vars["instance"] != "query" {
		t.Errorf("variables %v: want datasource (datasource) and instance (query)", vars)
	}
}

// The dashboard's queries parse as PromQL, as promtool judges them in a
// rules file (Grafana's variables replaced by what they stand for).
func TestDashboardQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): dashboard queries not parsed")
	}
	type rec struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var recs []rec
	repl := strings.NewReplacer("$__rate_interval", "5m", "$instance", ".+")
	for _, p := range queryPanels(loadDashboard(t).Panels) {
		for _, tg := range p.Targets {
			recs = append(recs, rec{fmt.Sprintf("dashboard:panel_%d:%s", p.ID, strings.ToLower(tg.RefID)), repl.Replace(tg.Expr)})
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Record < recs[j].Record })
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": recs}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}

// series is one input series of a promtool rules test.
type series struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

// exposedSeries is what nicdiag serves for three bundled snapshots, 30
// minutes of it, and node_exporter's receive counters for their
// interfaces, as promtool input series.
func exposedSeries(t *testing.T) []series {
	t.Helper()
	var input []series
	for _, snap := range []string{"82576-minipcie-x1", "i350-dpdk-vfio", "ccr2004-host"} {
		srv := httptest.NewServer(exporterhttp.Handler(exporter.New(option.Root("../testdata/snapshots/" + snap))))
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			srv.Close()
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		host := snap
		for name, f := range fams {
			for _, m := range f.GetMetric() {
				labels := []string{fmt.Sprintf("job=%q", "nicdiag"), fmt.Sprintf("instance=%q", host+":9799")}
				for _, l := range m.GetLabel() {
					labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				}
				v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
				input = append(input, series{name + "{" + strings.Join(labels, ",") + "}", strconv.FormatFloat(v, 'g', -1, 64) + "x30"})
				if name == "nicdiag_nic_info" {
					for _, l := range m.GetLabel() {
						if l.GetName() != "iface" || strings.Contains(l.GetValue(), ":") {
							continue
						}
						sel := fmt.Sprintf("{job=%q,instance=%q,device=%q}", "node", host+":9100", l.GetValue())
						input = append(input,
							series{"node_network_receive_bytes_total" + sel, "0+90000000x30"},
							series{"node_network_receive_packets_total" + sel, "0+60000x30"},
							series{"node_network_receive_drop_total" + sel, "0+60x30"})
					}
				}
			}
		}
	}
	sort.Slice(input, func(i, j int) bool { return input[i].Series < input[j].Series })
	return input
}

// Every dashboard query and every recording rule returns data when
// Prometheus holds what nicdiag really serves for bundled snapshots (and
// node_exporter series for their interfaces): a label or value that no
// series carries would leave a panel empty.
func TestQueriesReturnDataOnRealExposition(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): queries not evaluated")
	}
	input := exposedSeries(t)

	type sample struct {
		Labels string  `yaml:"labels"`
		Value  float64 `yaml:"value"`
	}
	type exprTest struct {
		Expr       string   `yaml:"expr"`
		EvalTime   string   `yaml:"eval_time"`
		ExpSamples []sample `yaml:"exp_samples"`
	}
	nonEmpty := func(q string) exprTest {
		return exprTest{"count(" + q + ") > bool 0", "20m", []sample{{"{}", 1}}}
	}
	var tests []exprTest
	repl := strings.NewReplacer("$__rate_interval", "5m", "$instance", ".+")
	for _, p := range queryPanels(loadDashboard(t).Panels) {
		for _, tg := range p.Targets {
			tests = append(tests, nonEmpty(repl.Replace(tg.Expr)))
		}
	}
	for _, r := range loadRules(t) {
		if r.Record != "" {
			tests = append(tests, nonEmpty(r.Record))
		}
	}
	abs, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{
		"rule_files":          []string{abs},
		"evaluation_interval": "1m",
		"tests":               []any{map[string]any{"interval": "1m", "input_series": input, "promql_expr_test": tests}},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "real.test.yml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("queries without data on the real exposition (%d input series): %v\n%s", len(input), err, out)
	}
}
