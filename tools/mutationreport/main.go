// Command mutationreport summarises the JSON reports gremlins (the mutation tester `make
// mutation` runs) writes, one per package: per package the efficacy, killed mutants over
// covered ones (killed + lived), the mutants no test covers, and then every surviving (LIVED)
// mutant as FILE:LINE:COLUMN TYPE, the list docs/testing.md explains. A mutant whose tests ran
// out of time is neither killed nor covered here (gremlins does not count it either): it is
// counted and listed as TIMED OUT, to be rerun with a larger MUTATION_TIMEOUT_COEFFICIENT.
//
//	go run ./tools/mutationreport [-min 85] PKG=REPORT.json ...
//
// It exits 1 when a package's efficacy is under -min (0, the default, checks nothing) or, with
// -min, when a package has timed-out mutants, and 2 when a report cannot be read.
//
// With -sample N it reads dry-run reports instead (gremlins unleash --dry-run, which marks each
// mutant RUNNABLE or NOT COVERED) and draws a sample for tools/mutation.sh -sample: in each
// package, N of the lines that carry a covered mutant, at random from -seed, printed one per
// line as PKG/FILE<TAB>LINE. Every mutant on a drawn line is then run, so the sample is a sample
// of lines, not of mutants. A package with N such lines or fewer gives all of them; the size of
// each package's sample goes to standard error.
//
//	go run ./tools/mutationreport -sample 40 [-seed 1] PKG=DRYRUN.json ...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"sort"
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
		if c.timedOut > 0 {
			// Not a measurement: the efficacy leaves these out. With -min it fails.
			mark += "  (incomplete: rerun the timed-out mutants with a larger MUTATION_TIMEOUT_COEFFICIENT)"
			if min > 0 {
				code = 1
			}
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

// line is one source line of a package: the file as PKG/FILE and its 1-based number.
type line struct {
	file string
	n    int
}

// sample reads each PKG=DRYRUN.json argument and writes, per package, up to n lines that carry
// a covered (RUNNABLE) mutant, drawn at random from seed, as FILE<TAB>LINE in file and line
// order; the size of each sample goes to info. It returns the exit code.
func sample(args []string, n int, seed uint64, out, info io.Writer) int {
	if n <= 0 {
		fmt.Fprintf(info, "mutationreport: -sample %d: want a positive number of lines\n", n)
		return 2
	}
	for _, a := range args {
		pkg, file, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(info, "mutationreport: argument %q: want PKG=DRYRUN.json\n", a)
			return 2
		}
		var rep report
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintf(info, "mutationreport: %v\n", err)
			return 2
		}
		err = json.NewDecoder(f).Decode(&rep)
		f.Close()
		if err != nil {
			fmt.Fprintf(info, "mutationreport: %s: %v\n", pkg, err)
			return 2
		}
		var lines []line
		mutants := map[line]int{}
		for _, f := range rep.Files {
			for _, m := range f.Mutations {
				if m.Status != "RUNNABLE" {
					continue
				}
				l := line{path.Join(pkg, f.FileName), m.Line}
				if mutants[l] == 0 {
					lines = append(lines, l)
				}
				mutants[l]++
			}
		}
		// The report's order is gremlins' walk; sort first so that a seed names one sample.
		sort.Slice(lines, func(i, j int) bool {
			if lines[i].file != lines[j].file {
				return lines[i].file < lines[j].file
			}
			return lines[i].n < lines[j].n
		})
		covered := len(mutants)
		total := 0
		for _, c := range mutants {
			total += c
		}
		drawn := lines
		if len(lines) > n {
			// One generator per package, so that a package's sample does not depend on
			// which other packages are named with it.
			h := fnv.New64a()
			h.Write([]byte(pkg))
			r := rand.New(rand.NewPCG(seed, h.Sum64()))
			r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
			drawn = lines[:n]
			sort.Slice(drawn, func(i, j int) bool {
				if drawn[i].file != drawn[j].file {
					return drawn[i].file < drawn[j].file
				}
				return drawn[i].n < drawn[j].n
			})
		}
		k := 0
		for _, l := range drawn {
			k += mutants[l]
			fmt.Fprintf(out, "%s\t%d\n", l.file, l.n)
		}
		fmt.Fprintf(info, "%-40s sample %d of %d lines with covered mutants (%d of %d covered mutants), seed %d\n",
			pkg, len(drawn), covered, k, total, seed)
	}
	return 0
}

func main() {
	min := flag.Float64("min", 0, "exit 1 when a package's efficacy is under this percentage")
	n := flag.Int("sample", 0, "read dry-run reports and print a sample of this many lines per package")
	seed := flag.Uint64("seed", 1, "the seed of -sample's draw")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mutationreport [-min PCT] PKG=REPORT.json ...\n       mutationreport -sample N [-seed S] PKG=DRYRUN.json ...")
		os.Exit(2)
	}
	if *n != 0 {
		os.Exit(sample(flag.Args(), *n, *seed, os.Stdout, os.Stderr))
	}
	os.Exit(run(flag.Args(), *min, os.Stdout))
}
