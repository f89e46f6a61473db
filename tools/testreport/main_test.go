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
		{"build error, Go before 1.24", []string{"# p", "x.go:1: undefined: y", ev("fail", "", "")},
			1, []string{"undefined: y"}},
		// Go 1.24 and later, as go1.26 writes it: build output is its own events.
		{"build error", []string{
			`{"ImportPath":"p [p.test]","Action":"build-output","Output":"# p [p.test]\n"}`,
			`{"ImportPath":"p [p.test]","Action":"build-output","Output":"./x.go:2:23: undefined: y\n"}`,
			`{"ImportPath":"p [p.test]","Action":"build-fail"}`,
			`{"Time":"2026-11-23T06:45:13.157Z","Action":"start","Package":"p"}`,
			`{"Time":"2026-11-23T06:45:13.157Z","Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}`,
			`{"Time":"2026-11-23T06:45:13.157Z","Action":"fail","Package":"p","Elapsed":0,"FailedBuild":"p [p.test]"}`},
			1, []string{"FAIL p ", "FAIL\tp [build failed]\n# p [p.test]\n./x.go:2:23: undefined: y\n"}},
		{"a dependency's build error", []string{
			`{"ImportPath":"p/dep","Action":"build-output","Output":"# p/dep\n"}`,
			`{"ImportPath":"p/dep","Action":"build-output","Output":"dep/dep.go:2:23: undefined: z\n"}`,
			`{"ImportPath":"p/dep","Action":"build-fail"}`,
			`{"Action":"start","Package":"p/b"}`,
			`{"Action":"output","Package":"p/b","Output":"FAIL\tp/b [build failed]\n"}`,
			`{"Action":"fail","Package":"p/b","Elapsed":0,"FailedBuild":"p/dep"}`},
			1, []string{"FAIL p/b ", "dep/dep.go:2:23: undefined: z"}},
		{"vet error", []string{
			`{"ImportPath":"p [p.test]","Action":"build-output","Output":"# [p]\n"}`,
			`{"ImportPath":"p [p.test]","Action":"build-output","Output":"./v_test.go:3:39: fmt.Printf format %d has arg \"s\" of wrong type string\n"}`,
			`{"ImportPath":"p [p.test]","Action":"build-fail"}`,
			`{"Action":"fail","Package":"p","Elapsed":0,"FailedBuild":"p [p.test]"}`},
			1, []string{`fmt.Printf format %d has arg "s" of wrong type string`}},
		{"a failed build no package names", []string{
			`{"ImportPath":"q","Action":"build-output","Output":"q.go:1: bad\n"}`,
			`{"ImportPath":"q","Action":"build-fail"}`,
			ev("pass", "A", ""), ev("pass", "", "")},
			1, []string{"FAIL build of q\nq.go:1: bad\n", "1 passed, 0 failed, 0 skipped"}},
		// TestMain's leak check fails the package after every test passed: FAIL, with its message.
		{"fails outside a test", []string{ev("pass", "A", ""), ev("output", "", "p tests leaked 3 PJRT buffers\n"),
			ev("output", "", "FAIL\tp\t0.1s\n"), ev("fail", "", "")},
			1, []string{"FAIL p ", "--- FAIL outside any test: p\np tests leaked 3 PJRT buffers\n", "1 passed, 0 failed, 0 skipped"}},
		// A line that is not JSON is counted and shown, and fails an otherwise passing run.
		{"stray lines", []string{ev("pass", "A", ""), "panic: boom", ev("pass", "", ""), "{not json"},
			1, []string{"ok   p ", "2 lines that are not go test -json events:\npanic: boom\n{not json\n", "1 passed, 0 failed, 0 skipped"}},
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
