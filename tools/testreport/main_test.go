package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	ev := func(action, test, output string) string {
		return `{"Action":"` + action + `","Package":"p","Test":"` + test + `","Output":` + quote(output) + `}`
	}
	cases := []struct {
		name  string
		lines []string
		code  int
		want  []string
	}{
		{"pass", []string{ev("output", "A", "    x_test.go:1: pjrttest: cpu with 8 CPU devices\n"), ev("pass", "A", ""), ev("pass", "", "")},
			0, []string{"1 passed", "pjrttest: cpu with 8 CPU devices", "1 passed, 0 failed, 0 skipped"}},
		{"fail", []string{ev("output", "A", "boom\n"), ev("fail", "A", ""), ev("fail", "", "")},
			1, []string{"--- FAIL: A", "boom", "0 passed, 1 failed, 0 skipped"}},
		{"skip is an error", []string{ev("output", "A", "no plugin\n"), ev("skip", "A", ""), ev("pass", "", "")},
			1, []string{"SKIP (not allowed): A", "0 passed, 0 failed, 1 skipped"}},
		{"build error", []string{"# p", "x.go:1: undefined: y", ev("fail", "", "")},
			1, []string{"undefined: y"}},
		{"nothing ran", nil, 1, []string{"0 passed, 0 failed, 0 skipped"}},
		{"two passes", []string{
			"testreport-pass: default",
			ev("output", "A", "    x_test.go:1: pjrttest: cpu with 8 CPU devices from /p/a.so (PJRT API 0.81)\n"), ev("pass", "A", ""), ev("pass", "", ""),
			"testreport-pass: other",
			ev("output", "A", "    x_test.go:1: pjrttest: cpu with 8 CPU devices from /p/b.so (PJRT API 0.115)\n"), ev("pass", "A", ""),
			ev("pass", "B", ""), ev("pass", "", "")},
			0, []string{"== pass default\n", "== pass default: 1 passed, 0 failed, 0 skipped; plugins: /p/a.so (PJRT API 0.81)\n",
				"== pass other\n", "from /p/b.so (PJRT API 0.115)", "== pass other: 2 passed, 0 failed, 0 skipped; plugins: /p/b.so (PJRT API 0.115)\n",
				"plugins: /p/b.so (PJRT API 0.115)\n3 passed, 0 failed, 0 skipped\n"}},
		{"a pass that ran nothing fails", []string{
			"testreport-pass: default", ev("pass", "A", ""), ev("pass", "", ""), "testreport-pass: other"},
			1, []string{"== pass other: 0 passed, 0 failed, 0 skipped; plugins: none logged by pjrttest", "== pass other ran no test", "1 passed, 0 failed, 0 skipped"}},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		code := run(strings.NewReader(strings.Join(tc.lines, "\n")), &out)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, tc.code, out.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
