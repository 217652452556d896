package nicdiag_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeExamples are the Example functions the README's library section
// shows, in its order: each code block is the function's body as it runs
// under go test, its Output left out.
var readmeExamples = []struct{ file, name string }{
	{"example_test.go", "ExampleHost_Monitor"},
	{"irq/example_test.go", "ExampleSampler"},
	{"monitor/example_test.go", "ExampleRun_Wait"},
	{"example_test.go", "ExampleExplain"},
}

// TestREADMEExamples keeps the README's library section in step with the
// examples: every listed example's body is a go block of the section, in
// order, and the section has no other go block.
func TestREADMEExamples(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(b)
	start := strings.Index(section, "\n## Library\n")
	if start < 0 {
		t.Fatal("README.md has no Library section")
	}
	section = section[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	blocks := goBlocks(section)
	if len(blocks) != len(readmeExamples) {
		t.Errorf("the Library section has %d go blocks, want %d (one per example in readmeExamples)", len(blocks), len(readmeExamples))
	}
	for i, ex := range readmeExamples {
		body := exampleBody(t, ex.file, ex.name)
		if i >= len(blocks) || blocks[i] != body {
			got := ""
			if i < len(blocks) {
				got = blocks[i]
			}
			t.Errorf("go block %d of the Library section is not the body of %s in %s:\n--- README\n%s--- %s\n%s", i+1, ex.name, ex.file, got, ex.name, body)
		}
	}
}

// goBlocks returns the bodies of the ```go blocks of md.
func goBlocks(md string) []string {
	var out []string
	for {
		i := strings.Index(md, "```go\n")
		if i < 0 {
			return out
		}
		md = md[i+len("```go\n"):]
		j := strings.Index(md, "```")
		if j < 0 {
			return out
		}
		out = append(out, md[:j])
		md = md[j+3:]
	}
}

// exampleBody returns the statements of function name in file, one tab of
// indentation removed, up to its Output comment.
func exampleBody(t *testing.T, file, name string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name {
			continue
		}
		body := string(src[fs.Position(fd.Body.Lbrace).Offset+1 : fs.Position(fd.Body.Rbrace).Offset])
		if i := strings.Index(body, "\t// Output:"); i >= 0 {
			body = body[:i]
		}
		var b strings.Builder
		for _, l := range strings.Split(strings.Trim(body, "\n"), "\n") {
			b.WriteString(strings.TrimPrefix(l, "\t") + "\n")
		}
		return b.String()
	}
	t.Fatalf("%s has no %s", file, name)
	return ""
}

// TestREADMEFuzzCount: the number of fuzz targets the README's Tests
// paragraph states is the number of Fuzz functions in the tree, which
// fuzz.sh finds package by package with go test -list.
func TestREADMEFuzzCount(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func Fuzz\w*\(`)
	n := 0
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != "."):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(p)
		n += len(fuzzFunc.FindAll(src, -1))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("found %d fuzz targets: the walk missed packages", n)
	}
	for _, re := range []string{`fuzz targets \((\d+) now\)`, `(\d+) × 4 s plus a build per target`} {
		m := regexp.MustCompile(re).FindSubmatch(b)
		if m == nil {
			t.Errorf("README.md no longer says %q", re)
			continue
		}
		if got, _ := strconv.Atoi(string(m[1])); got != n {
			t.Errorf("README.md says %d fuzz targets (%q); the tree has %d", got, m[0], n)
		}
	}
}
