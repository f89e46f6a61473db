package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reportPath is docs/reliability.md at the repository root. The suite rewrites only what lies
// between reportBegin and reportEnd; the rest (the fuzz runs) is written by hand.
var reportPath = filepath.Join("..", "..", "docs", "reliability.md")

const (
	reportBegin = "<!-- hostile-suite:begin (go test ./internal/hostile -update-report) -->"
	reportEnd   = "<!-- hostile-suite:end -->"
)

// columns of the summary tables, in order.
var columns = []string{kindTyped, kindCorrect, kindWrong, kindSignal, kindHang, kindPanic}

var columnTitles = map[string]string{kindTyped: "typed errors", kindCorrect: "correct results", kindWrong: "wrong",
	kindSignal: "signals", kindHang: "hangs", kindPanic: "panics"}

// writeReport rewrites the suite's part of docs/reliability.md from this run's results.
func writeReport(t *testing.T, cases []*hcase) {
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatalf("-update-report: %v", err)
	}
	doc := string(data)
	i, j := strings.Index(doc, reportBegin), strings.Index(doc, reportEnd)
	if i < 0 || j < i {
		t.Fatalf("-update-report: %s lacks the markers %q and %q", reportPath, reportBegin, reportEnd)
	}
	doc = doc[:i+len(reportBegin)] + "\n" + reportTables(cases) + doc[j:]
	if err := os.WriteFile(reportPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", reportPath)
}

// reportTables renders the summary by class, by entry point, the class × entry point matrix of
// input counts, and every case with its expectation and outcome.
func reportTables(cases []*hcase) string {
	outcomesMu.Lock()
	defer outcomesMu.Unlock()
	var b strings.Builder
	count := func(keep func(*hcase) bool) (n int, by map[string]int) {
		by = map[string]int{}
		for _, c := range cases {
			if keep(c) {
				n++
				by[outcomes[c].Kind]++
			}
		}
		return n, by
	}
	header := func(first string) {
		fmt.Fprintf(&b, "| %s | inputs |", first)
		for _, col := range columns {
			fmt.Fprintf(&b, " %s |", columnTitles[col])
		}
		b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(columns)) + "\n")
	}
	row := func(name string, n int, by map[string]int) {
		fmt.Fprintf(&b, "| %s | %d |", name, n)
		for _, col := range columns {
			fmt.Fprintf(&b, " %d |", by[col])
		}
		b.WriteString("\n")
	}

	total, byAll := count(func(*hcase) bool { return true })
	fmt.Fprintf(&b, "\n%d inputs: %d typed errors, %d correct results, %d wrong, %d signals, %d hangs, %d panics.\n\n",
		total, byAll[kindTyped], byAll[kindCorrect], byAll[kindWrong], byAll[kindSignal], byAll[kindHang], byAll[kindPanic])

	b.WriteString("### By class\n\n")
	header("class")
	for _, cl := range classes {
		n, by := count(func(c *hcase) bool { return c.class == cl })
		row(string(cl), n, by)
	}
	row("**all**", total, byAll)

	b.WriteString("\n### By entry point\n\n")
	header("entry point")
	for _, e := range entries {
		n, by := count(func(c *hcase) bool { return c.entry == e })
		row(e, n, by)
	}

	b.WriteString("\n### Inputs per class and entry point\n\n| entry point |")
	for _, cl := range classes {
		fmt.Fprintf(&b, " %s |", cl)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(classes)) + "\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "| %s |", e)
		for _, cl := range classes {
			n, _ := count(func(c *hcase) bool { return c.entry == e && c.class == cl })
			if n == 0 {
				b.WriteString(" |")
			} else {
				fmt.Fprintf(&b, " %d |", n)
			}
		}
		b.WriteString("\n")
	}

	var failing []*hcase
	for _, c := range cases {
		if !outcomes[c].ok() {
			failing = append(failing, c)
		}
	}
	if len(failing) > 0 {
		b.WriteString("\n### Failing inputs\n\n| input | entry point | expected | outcome | what happened |\n|---|---|---|---|---|\n")
		for _, c := range failing {
			o := outcomes[c]
			what, _, _ := strings.Cut(o.Detail, "\n")
			what = localPort.ReplaceAllString(what, "127.0.0.1:PORT") // the same text every run
			if r := []rune(what); len(r) > 240 {
				what = string(r[:240]) + "…"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(c.name), c.entry, cell(c.expectation()), o.Kind, cell(what))
		}
	}

	b.WriteString("\n### Every input\n\n| input | class | entry point | expected | outcome |\n|---|---|---|---|---|\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(c.name), c.class, c.entry, cell(c.expectation()), outcomes[c].Kind)
	}
	b.WriteString("\n")
	return b.String()
}

var localPort = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// cell escapes text for a Markdown table cell.
var cell = strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", "*", `\*`, "_", `\_`).Replace
