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
		"p/a                                      efficacy  66.67% (killed 2 / covered 3)  timed out 1  not covered 1  not viable 1  (under 80%)  (incomplete: rerun the timed-out mutants with a larger MUTATION_TIMEOUT_COEFFICIENT)\n",
		"p/b                                      efficacy 100.00% (killed 0 / covered 0)  timed out 0  not covered 0  not viable 0\n",
		"all                                      efficacy  66.67% (killed 2 / covered 3)\n",
		"1 surviving mutants\nLIVED p/a/x.go:3:4 CONDITIONALS_BOUNDARY\nTIMED OUT p/a/x.go:5:6 CONDITIONALS_NEGATION\n",
	}
	if got := out.String(); got != strings.Join(want, "") {
		t.Errorf("output:\n%s\nwant:\n%s", got, strings.Join(want, ""))
	}
	out.Reset()
	if code := run([]string{"p/a=" + a}, 66, &out); code != 1 {
		t.Errorf("-min 66: exit %d, want 1 (p/a is over 66%% but has a timed-out mutant)", code)
	}
	if code := run([]string{"p/b=" + b}, 66, &out); code != 0 {
		t.Errorf("-min 66, p/b: exit %d, want 0", code)
	}
	if code := run([]string{"p/a=" + a}, 0, &out); code != 0 {
		t.Errorf("no -min: exit %d, want 0", code)
	}
	if code := run([]string{"p/a=" + filepath.Join(dir, "none.json")}, 0, &out); code != 2 {
		t.Errorf("missing report: exit %d, want 2", code)
	}
	if code := run([]string{"p/a"}, 0, &out); code != 2 {
		t.Errorf("no =: exit %d, want 2", code)
	}
}

func TestSample(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	// Lines 1..6 of x.go carry covered mutants (line 2 two of them); line 9 only an uncovered one.
	os.WriteFile(a, []byte(`{"files":[{"file_name":"x.go","mutations":[
		{"type":"ARITHMETIC_BASE","status":"RUNNABLE","line":6,"column":2},
		{"type":"ARITHMETIC_BASE","status":"RUNNABLE","line":1,"column":2},
		{"type":"CONDITIONALS_BOUNDARY","status":"RUNNABLE","line":2,"column":4},
		{"type":"CONDITIONALS_NEGATION","status":"RUNNABLE","line":2,"column":4},
		{"type":"CONDITIONALS_NEGATION","status":"RUNNABLE","line":3,"column":8},
		{"type":"CONDITIONALS_NEGATION","status":"RUNNABLE","line":4,"column":8},
		{"type":"CONDITIONALS_NEGATION","status":"RUNNABLE","line":5,"column":8},
		{"type":"CONDITIONALS_NEGATION","status":"NOT COVERED","line":9,"column":1}]}]}`), 0o644)
	draw := func(n int, seed uint64) (lines []string, info string) {
		t.Helper()
		var out, inf bytes.Buffer
		if code := sample([]string{"p/a=" + a}, n, seed, &out, &inf); code != 0 {
			t.Fatalf("-sample %d: exit %d: %s", n, code, inf.String())
		}
		return strings.Fields(out.String()), inf.String()
	}
	all, info := draw(10, 1)
	want := "p/a/x.go 1 p/a/x.go 2 p/a/x.go 3 p/a/x.go 4 p/a/x.go 5 p/a/x.go 6"
	if got := strings.Join(all, " "); got != want {
		t.Errorf("-sample 10 over 6 lines: %s, want every line: %s", got, want)
	}
	if !strings.Contains(info, "sample 6 of 6 lines with covered mutants (7 of 7 covered mutants), seed 1") {
		t.Errorf("-sample 10: info %q", info)
	}
	three, info := draw(3, 1)
	if len(three) != 6 {
		t.Fatalf("-sample 3: %v, want 3 lines", three)
	}
	for i := 0; i+3 < len(three); i += 2 {
		if three[i+1] >= three[i+3] {
			t.Errorf("-sample 3: %v not in line order", three)
		}
	}
	if !strings.Contains(info, "sample 3 of 6 lines") {
		t.Errorf("-sample 3: info %q", info)
	}
	again, _ := draw(3, 1)
	if strings.Join(again, " ") != strings.Join(three, " ") {
		t.Errorf("seed 1 drew %v, then %v", three, again)
	}
	differs := false
	for seed := uint64(2); seed < 12 && !differs; seed++ {
		other, _ := draw(3, seed)
		differs = strings.Join(other, " ") != strings.Join(three, " ")
	}
	if !differs {
		t.Errorf("seeds 2..11 all drew %v, as seed 1 did", three)
	}
	var out, inf bytes.Buffer
	if code := sample([]string{"p/a=" + a}, 0, 1, &out, &inf); code != 2 {
		t.Errorf("-sample 0: exit %d, want 2", code)
	}
	if code := sample([]string{"p/a=" + filepath.Join(dir, "none.json")}, 3, 1, &out, &inf); code != 2 {
		t.Errorf("missing report: exit %d, want 2", code)
	}
}
