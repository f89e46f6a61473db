package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	b := filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(`{"files":[{"file_name":"x.go","mutations":[
		{"type":"ARITHMETIC_BASE","status":"KILLED","line":1,"column":2},
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":3,"column":4},
		{"type":"CONDITIONALS_NEGATION","status":"TIMED OUT","line":5,"column":6},
		{"type":"CONDITIONALS_NEGATION","status":"KILLED","line":7,"column":8},
		{"type":"CONDITIONALS_NEGATION","status":"NOT COVERED","line":9,"column":1},
		{"type":"INVERT_NEGATIVES","status":"NOT VIABLE","line":9,"column":2}]}]}`), 0o644)
	os.WriteFile(b, []byte(`{"files":[]}`), 0o644)
	var out bytes.Buffer
	if code := run([]string{"p/a=" + a, "p/b=" + b}, 80, &out); code != 1 {
		t.Errorf("exit %d, want 1 (p/a is at 66.67%%):\n%s", code, out.String())
	}
	want := []string{
		"p/a                                      efficacy  66.67% (killed 2 / covered 3)  timed out 1  not covered 1  not viable 1  (under 80%)\n",
		"p/b                                      efficacy 100.00% (killed 0 / covered 0)  timed out 0  not covered 0  not viable 0\n",
		"all                                      efficacy  66.67% (killed 2 / covered 3)\n",
		"1 surviving mutants\nLIVED p/a/x.go:3:4 CONDITIONALS_BOUNDARY\nTIMED OUT p/a/x.go:5:6 CONDITIONALS_NEGATION\n",
	}
	if got := out.String(); got != strings.Join(want, "") {
		t.Errorf("output:\n%s\nwant:\n%s", got, strings.Join(want, ""))
	}
	out.Reset()
	if code := run([]string{"p/a=" + a}, 66, &out); code != 0 {
		t.Errorf("-min 66: exit %d, want 0", code)
	}
	if code := run([]string{"p/a=" + filepath.Join(dir, "none.json")}, 0, &out); code != 2 {
		t.Errorf("missing report: exit %d, want 2", code)
	}
	if code := run([]string{"p/a"}, 0, &out); code != 2 {
		t.Errorf("no =: exit %d, want 2", code)
	}
}
