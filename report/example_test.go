package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/report"
)

// Read a record that monitor --record wrote, and draw it as a page.
func Example() {
	// Two samples of a 2-CPU host, as `nicdiag monitor --record` writes
	// them; the run was stopped before the summary line.
	const record = `{"type":"start","schema":"nicdiag/v1","interval_s":1,"nics":[]}
{"type":"sample","schema":"nicdiag/v1","time":"2024-05-14T10:00:01Z","interval_s":1,"irq_time_accounted":true,"cpus":[{"cpu":0,"irq_pct":1,"softirq_pct":2,"busy_pct":9},{"cpu":1,"irq_pct":3,"softirq_pct":95,"busy_pct":99}],"nics":[]}
{"type":"sample","schema":"nicdiag/v1","time":"2024-05-14T10:00:02Z","interval_s":1,"irq_time_accounted":true,"cpus":[{"cpu":0,"irq_pct":1,"softirq_pct":2,"busy_pct":8},{"cpu":1,"irq_pct":3,"softirq_pct":96,"busy_pct":100}],"nics":[]}
`
	rec, err := monitor.ReadRecord(strings.NewReader(record))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rec.Samples), "samples")
	fmt.Println(rec.Notes[0])
	for _, f := range rec.Summary.Findings {
		fmt.Println(f.Severity, f.Code, f.Subject)
	}

	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	// The extension picks the format: .html for the page, .svg for the
	// charts alone.
	if err := report.WriteFile(filepath.Join(dir, "run.html"), rec); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2 samples
	// the record has no summary line; the verdicts below were computed from its 2 samples
	// error irq.hot_core cpu1
}
