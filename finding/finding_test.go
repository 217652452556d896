package finding

import (
	"encoding/json"
	"testing"
)

func TestSeverityJSONRoundTrip(t *testing.T) {
	f := Finding{Code: PCIeBottleneck, Severity: Error, Subject: "eth0", Summary: "s", CapacityMbps: Mbps(1435)}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"pcie.bottleneck","severity":"error","subject":"eth0","summary":"s","capacity_mbps":1435}`
	if string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	var back Finding
	if err := json.Unmarshal(b, &back); err != nil || back.Severity != Error || *back.CapacityMbps != 1435 {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"severity":"fatal"}`), &back); err == nil {
		t.Error("unknown severity accepted")
	}
	if _, err := json.Marshal(Finding{Severity: 7}); err == nil {
		t.Error("invalid severity marshalled")
	}
}

func TestSortAndWorst(t *testing.T) {
	fs := []Finding{
		{Code: "b", Severity: Info, Subject: "x"},
		{Code: "a", Severity: Warn, Subject: "y"},
		{Code: "a", Severity: Error, Subject: "z"},
		{Code: "a", Severity: Warn, Subject: "x"},
	}
	Sort(fs)
	got := ""
	for _, f := range fs {
		got += f.Severity.String() + ":" + string(f.Code) + ":" + f.Subject + " "
	}
	if want := "error:a:z warn:a:x warn:a:y info:b:x "; got != want {
		t.Errorf("Sort = %q, want %q", got, want)
	}
	if w, ok := Worst(fs); !ok || w != Error {
		t.Errorf("Worst = %v %v", w, ok)
	}
	if _, ok := Worst(nil); ok {
		t.Error("Worst(nil) reported a severity")
	}
}
