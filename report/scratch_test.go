package report

import (
	"os"
	"testing"
)

func TestScratch(t *testing.T) {
	rec, err := ReadFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"/tmp/rep/out.html", "/tmp/rep/out.svg"} {
		if err := WriteFile(f, rec); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Stdout
}
