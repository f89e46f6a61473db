// Command testreport summarises `go test -json` output for `make test`: per package the number
// of tests passed, failed and skipped, the PJRT client each integration package really opened
// (pjrttest logs it), the output of failed tests, the compiler's (or vet's) message for a package
// that failed to build, and a closing "N passed, N failed, N skipped" line. It exits non-zero when
// a test failed, a package failed to build, or a test skipped: xlamesh's tests never skip.
//
// Since Go 1.24, build output comes as JSON events of its own ("build-output", "build-fail",
// keyed by ImportPath) and a package's "fail" event names the build that broke it
// (FailedBuild); older Go printed it as plain lines, which are passed through as they are.
//
//	go test -race -count=1 -json ./... | go run ./tools/testreport
//
// The input may hold several passes, each started by a line "testreport-pass: NAME" (make test
// runs the suites once per CPU plugin). Each pass is reported on its own, ends with a line naming
// the plugins its packages opened, and fails when it ran no test; the closing line counts all.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	Elapsed     float64
	ImportPath  string // build events: the package being built, e.g. "p [p.test]"
	FailedBuild string // a package's fail event: the ImportPath whose build failed
}

type pkgState struct {
	passed, failed, skipped int
	result                  string
	elapsed                 float64
	clients                 []string
	output                  map[string][]string // test -> output lines
	failedTests             []string
	skippedTests            []string
	failedBuild             string
}

// passMarker starts a pass; the rest of the line names it.
const passMarker = "testreport-pass: "

// pluginRE finds the plugin in pjrttest's line "pjrttest: cpu with 8 CPU devices from PATH (PJRT API 0.81)".
var pluginRE = regexp.MustCompile(`from (.+ \(PJRT API [0-9.]+\))$`)

type pass struct {
	name        string
	pkgs        map[string]*pkgState
	buildOutput map[string][]string // ImportPath -> the compiler's (or vet's) output
	buildFailed []string            // ImportPaths whose build failed, in order
}

func newPass(name string) *pass {
	return &pass{name: name, pkgs: map[string]*pkgState{}, buildOutput: map[string][]string{}}
}

func main() {
	code := run(os.Stdin, os.Stdout)
	os.Exit(code)
}

func run(in io.Reader, out io.Writer) int {
	passes := []*pass{newPass("")}
	get := func(name string) *pkgState {
		pkgs := passes[len(passes)-1].pkgs
		p, ok := pkgs[name]
		if !ok {
			p = &pkgState{output: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	var stray []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, passMarker); ok {
			if cur := passes[len(passes)-1]; cur.name == "" && len(cur.pkgs) == 0 && len(cur.buildFailed) == 0 {
				passes = passes[:len(passes)-1]
			}
			passes = append(passes, newPass(name))
			continue
		}
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			stray = append(stray, line) // build errors and the like
			continue
		}
		switch ps := passes[len(passes)-1]; e.Action {
		case "build-output":
			ps.buildOutput[e.ImportPath] = append(ps.buildOutput[e.ImportPath], e.Output)
			continue
		case "build-fail":
			ps.buildFailed = append(ps.buildFailed, e.ImportPath)
			continue
		}
		p := get(e.Package)
		switch e.Action {
		case "output":
			if i := strings.Index(e.Output, "pjrttest: "); i >= 0 {
				c := strings.TrimSpace(e.Output[i:])
				if !contains(p.clients, c) {
					p.clients = append(p.clients, c)
				}
			}
			p.output[e.Test] = append(p.output[e.Test], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				p.result, p.elapsed = e.Action, e.Elapsed
				p.failedBuild = e.FailedBuild
				continue
			}
			switch e.Action {
			case "pass":
				p.passed++
			case "fail":
				p.failed++
				p.failedTests = append(p.failedTests, e.Test)
			case "skip":
				p.skipped++
				p.skippedTests = append(p.skippedTests, e.Test)
			}
		}
	}
	var passed, failed, skipped int
	bad := false
	for _, ps := range passes {
		p, f, sk, b := report(out, ps)
		passed, failed, skipped, bad = passed+p, failed+f, skipped+sk, bad || b
	}
	if len(stray) > 0 {
		// Whatever is not a test2json event (a build error of an old Go, a crash's message,
		// a tool's chatter) is counted and shown, and fails the run: nothing is dropped.
		fmt.Fprintf(out, "%d lines that are not go test -json events:\n%s\n", len(stray), strings.Join(stray, "\n"))
		bad = true
	}
	fmt.Fprintf(out, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if bad || failed > 0 || passed == 0 {
		return 1
	}
	return 0
}

// report writes one pass's packages and, for a named pass, its header and closing line. It
// returns the pass's counts and whether it failed.
func report(out io.Writer, ps *pass) (passed, failed, skipped int, bad bool) {
	if ps.name != "" {
		fmt.Fprintf(out, "== pass %s\n", ps.name)
	}
	names := make([]string, 0, len(ps.pkgs))
	for n := range ps.pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	var plugins []string
	shown := map[string]bool{} // failed builds printed with a package
	for _, n := range names {
		p := ps.pkgs[n]
		passed, failed, skipped = passed+p.passed, failed+p.failed, skipped+p.skipped
		if p.result == "" && p.passed+p.failed+p.skipped == 0 {
			continue
		}
		status := "ok  "
		if p.result == "fail" || p.failed > 0 {
			status, bad = "FAIL", true
		}
		fmt.Fprintf(out, "%s %-52s %4d passed %3d failed %3d skipped  %6.1fs\n", status, n, p.passed, p.failed, p.skipped, p.elapsed)
		for _, c := range p.clients {
			fmt.Fprintf(out, "       %s\n", c)
			if m := pluginRE.FindStringSubmatch(c); m != nil && !contains(plugins, m[1]) {
				plugins = append(plugins, m[1])
			}
		}
		for _, t := range p.failedTests {
			fmt.Fprintf(out, "--- FAIL: %s\n%s", t, strings.Join(p.output[t], ""))
		}
		if p.result == "fail" && p.failed == 0 {
			if p.failedBuild == "" {
				// Failed outside any test: TestMain (a leak check), init, or a crash after the tests.
				fmt.Fprintf(out, "--- FAIL outside any test: %s\n", n)
			}
			fmt.Fprint(out, strings.Join(p.output[""], ""))
		}
		if p.failedBuild != "" {
			fmt.Fprint(out, strings.Join(ps.buildOutput[p.failedBuild], ""))
			shown[p.failedBuild] = true
		}
		for _, t := range p.skippedTests {
			fmt.Fprintf(out, "--- SKIP (not allowed): %s\n%s", t, strings.Join(p.output[t], ""))
			bad = true
		}
	}
	for _, ip := range ps.buildFailed {
		if !shown[ip] { // a build no tested package named
			fmt.Fprintf(out, "FAIL build of %s\n%s", ip, strings.Join(ps.buildOutput[ip], ""))
			shown[ip], bad = true, true
		}
	}
	if ps.name != "" {
		if len(plugins) == 0 {
			plugins = []string{"none logged by pjrttest"}
		}
		fmt.Fprintf(out, "== pass %s: %d passed, %d failed, %d skipped; plugins: %s\n", ps.name, passed, failed, skipped, strings.Join(plugins, ", "))
		if passed == 0 {
			fmt.Fprintf(out, "== pass %s ran no test\n", ps.name)
			bad = true
		}
	}
	return passed, failed, skipped, bad
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
