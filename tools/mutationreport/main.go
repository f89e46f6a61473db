// Command mutationreport summarises the JSON reports gremlins (the mutation tester `make
// mutation` runs) writes, one per package: per package the efficacy, killed mutants over
// covered ones (killed + lived), the mutants no test covers, and then every surviving (LIVED)
// mutant as FILE:LINE:COLUMN TYPE, the list docs/testing.md explains. A mutant whose tests ran
// out of time is neither killed nor covered here (gremlins does not count it either): it is
// counted and listed as TIMED OUT, to be rerun with a larger MUTATION_TIMEOUT_COEFFICIENT.
//
//	go run ./tools/mutationreport [-min 85] PKG=REPORT.json ...
//
// It exits 1 when a package's efficacy is under -min (0, the default, checks nothing), and 2
// when a report cannot be read.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// report is the part of gremlins' JSON output that is read.
type report struct {
	Files []struct {
		FileName  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// counts are one package's mutants by outcome.
type counts struct {
	killed, lived, timedOut, notCovered, notViable int
	survivors, timeouts                            []string
}

// efficacy is killed over covered (killed + lived), in percent; 100 with nothing covered.
func (c counts) efficacy() float64 {
	if c.killed+c.lived == 0 {
		return 100
	}
	return 100 * float64(c.killed) / float64(c.killed+c.lived)
}

func tally(pkg string, r io.Reader) (counts, error) {
	var rep report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return counts{}, fmt.Errorf("mutationreport: %s: %w", pkg, err)
	}
	var c counts
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				c.killed++
			case "LIVED":
				c.lived++
				c.survivors = append(c.survivors, fmt.Sprintf("%s:%d:%d %s", path.Join(pkg, f.FileName), m.Line, m.Column, m.Type))
			case "TIMED OUT":
				c.timedOut++
				c.timeouts = append(c.timeouts, fmt.Sprintf("%s:%d:%d %s", path.Join(pkg, f.FileName), m.Line, m.Column, m.Type))
			case "NOT COVERED":
				c.notCovered++
			case "NOT VIABLE":
				c.notViable++
			}
		}
	}
	return c, nil
}

// run reads each PKG=FILE argument and writes the summary; it returns the exit code.
func run(args []string, min float64, out io.Writer) int {
	var all, timeouts []string
	code := 0
	var tk, tl int
	for _, a := range args {
		pkg, file, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(out, "mutationreport: argument %q: want PKG=REPORT.json\n", a)
			return 2
		}
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintf(out, "mutationreport: %v\n", err)
			return 2
		}
		c, err := tally(pkg, f)
		f.Close()
		if err != nil {
			fmt.Fprintln(out, err)
			return 2
		}
		k := c.killed
		tk, tl = tk+k, tl+c.lived
		mark := ""
		if c.efficacy() < min {
			mark, code = fmt.Sprintf("  (under %.0f%%)", min), 1
		}
		fmt.Fprintf(out, "%-40s efficacy %6.2f%% (killed %d / covered %d)  timed out %d  not covered %d  not viable %d%s\n",
			pkg, c.efficacy(), k, k+c.lived, c.timedOut, c.notCovered, c.notViable, mark)
		all = append(all, c.survivors...)
		timeouts = append(timeouts, c.timeouts...)
	}
	tot := counts{killed: tk, lived: tl}
	fmt.Fprintf(out, "%-40s efficacy %6.2f%% (killed %d / covered %d)\n", "all", tot.efficacy(), tk, tk+tl)
	fmt.Fprintf(out, "%d surviving mutants\n", len(all))
	for _, s := range all {
		fmt.Fprintln(out, "LIVED", s)
	}
	for _, s := range timeouts {
		fmt.Fprintln(out, "TIMED OUT", s)
	}
	return code
}

func main() {
	min := flag.Float64("min", 0, "exit 1 when a package's efficacy is under this percentage")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mutationreport [-min PCT] PKG=REPORT.json ...")
		os.Exit(2)
	}
	os.Exit(run(flag.Args(), *min, os.Stdout))
}
