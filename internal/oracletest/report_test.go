package oracletest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

var updateReport = flag.Bool("update-report", false, "rewrite docs/jax-compat.md from this run (all tests must run)")

// reportPath is docs/jax-compat.md at the repository root.
var reportPath = filepath.Join("..", "..", "docs", "jax-compat.md")

// Outcome statuses of one case.
const (
	statusPass       = "pass"
	statusDeliberate = "deliberate" // a documented, intended difference (known_test.go)
	statusOpen       = "open"       // a reported disagreement awaiting a fix (known_test.go)
	statusFail       = "fail"       // an unexplained disagreement: the test fails
	statusSkipped    = "not compared"
)

type outcome struct {
	group, name, status string
	diffs               []string
	note                string
}

// collector gathers the outcome of every case for the report.
type collector struct {
	mu                 sync.Mutex
	outcomes           []outcome
	groupNotes         map[string]string
	jax, jaxlib, flaxV string
	programs           map[string]programInfo // by program name, for the programs group
	runNotes           map[string][]string    // by "group:program/run": float32 outputs equal only within the tolerance
}

var report = &collector{groupNotes: map[string]string{}}

func (c *collector) setVersion(jax, jaxlib, flax string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jax, c.jaxlib, c.flaxV = jax, jaxlib, flax
}

// noteGroup records a sentence about a whole group for the report.
func (c *collector) noteGroup(group, note string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.groupNotes[group] = note
}

// skip records a case that this run could not compare, with the reason.
func (c *collector) skip(group, name, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outcomes = append(c.outcomes, outcome{group: group, name: name, status: statusSkipped, note: why})
}

// reporter is the part of *testing.T that check uses (a fake in tests).
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// check records the comparison of one case. diffs lists each way xlamesh
// disagrees with JAX (empty: agreement). A disagreement listed in
// known_test.go is logged, not failed, when it is exactly the one listed
// (the same JAX value and the same xlamesh value); any other disagreement
// fails the test, as does a known one that changed or no longer occurs, so
// known_test.go stays true.
func (c *collector) check(t reporter, group, name string, diffs []string) {
	t.Helper()
	k, isKnown := known[group+"/"+name]
	o := outcome{group: group, name: name, status: statusPass, diffs: diffs}
	if why, ok := gpuUnspecified[group+"/"+name]; ok && len(diffs) > 0 && gpuLoose() {
		t.Logf("%s/%s: on a GPU, where the result is XLA's choice (%s): %s", group, name, why, strings.Join(diffs, "; "))
		diffs = nil
	}
	switch {
	case len(diffs) == 0 && isKnown:
		t.Errorf("%s/%s: agrees with JAX now; remove it from known_test.go (%s)", group, name, k.why)
		o.status = statusFail
	case len(diffs) == 0:
	case isKnown && !slices.Equal(diffs, k.diffs):
		o.status = statusFail
		t.Errorf("%s/%s: the known %s disagreement changed (update known_test.go if intended):\n  now:\n  %s\n  listed:\n  %s",
			group, name, k.status, strings.Join(diffs, "\n  "), strings.Join(k.diffs, "\n  "))
	case isKnown:
		o.status, o.note = k.status, k.why
		t.Logf("%s/%s: known %s disagreement (%s): %s", group, name, k.status, k.why, strings.Join(diffs, "; "))
	default:
		o.status = statusFail
		t.Errorf("%s/%s disagrees with JAX:\n  %s", group, name, strings.Join(diffs, "\n  "))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outcomes = append(c.outcomes, o)
}

// groupOrder is the order of the report's sections.
var groupOrder = []string{"mesh", "make_mesh", "abstract_mesh", "spec", "sharding", "flax", "flax_constraint",
	"mesh_utils", "hybrid_mesh", "visualize", "lowering", "lowering_numeric", "multiprocess", "ops_data", "vjp", "optim", "ops_numpy", "ops_broadcast",
	"ops_shardmap", "ops_control", "explicit", "ops_types", "programs", "programs081", "programs_types", "programs_types081", "programs_poly", "programs_poly081", "backcompat", "linalg", "bytecode_versions", "memory_kinds"}

func TestMain(m *testing.M) {
	flag.Parse()
	setGPUFlags()
	code := m.Run()
	text, err := report.render()
	switch {
	case *updateReport && !defaultDevices():
		fmt.Fprintf(os.Stderr, "oracletest: -update-report: the report is for %d devices; unset %s\n", pjrt.DefaultCPUDeviceCount, pjrttest.EnvDevices)
		code = 1
	case *updateReport && err != nil:
		fmt.Fprintln(os.Stderr, "oracletest: -update-report:", err)
		code = 1
	case *updateReport:
		if err := os.WriteFile(reportPath, []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "oracletest:", err)
			code = 1
		} else {
			fmt.Fprintln(os.Stderr, "oracletest: wrote", reportPath)
		}
	case err == nil && code == 0 && os.Getenv("XLAMESH_PJRT_PLUGIN") != "":
		// The report describes the default plugin (its tolerance notes name the
		// values that are not bit-equal there); a run on another plugin must pass
		// every case but does not rewrite or compare the report.
		fmt.Fprintln(os.Stderr, "oracletest: plugin from XLAMESH_PJRT_PLUGIN; the report is for the default plugin, not compared")
	case code == 0 && !defaultDevices():
		// The report describes the default 8 CPU devices: with fewer
		// ($XLAMESH_TEST_DEVICES), the cases whose goldens need 8 are skipped
		// and the others run on smaller meshes.
		fmt.Fprintf(os.Stderr, "oracletest: %s is set; the report is for %d devices, not compared\n", pjrttest.EnvDevices, pjrt.DefaultCPUDeviceCount)
	case err == nil && code == 0:
		// A full, passing run must match the checked-in report, so the
		// report never goes stale.
		old, rerr := os.ReadFile(reportPath)
		if rerr != nil || withoutToleranceNotes(string(old)) != withoutToleranceNotes(text) {
			fmt.Fprintf(os.Stderr, "oracletest: %s is stale (the run's outcomes differ from it); regenerate it with:\n"+
				"\tgo test ./internal/oracletest -update-report\n", reportPath)
			code = 1
		}
	}
	os.Exit(code)
}

// defaultDevices says whether the tests' client has the default device count, that of the
// report: pjrttest.Devices() is pjrt.DefaultCPUDeviceCount.
func defaultDevices() bool {
	n, err := pjrttest.Devices()
	return err == nil && n == pjrt.DefaultCPUDeviceCount
}

// render returns the report's text, or an error if some group did not run
// (a filtered run, -run, cannot make the report).
func (c *collector) render() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, o := range c.outcomes {
		seen[o.group] = true
	}
	for _, g := range groupOrder {
		if !seen[g] {
			return "", fmt.Errorf("the report needs every group; %s did not run (drop -run)", g)
		}
	}
	var b strings.Builder
	b.WriteString(reportHeader)
	fmt.Fprintf(&b, "Goldens: jax %s, jaxlib %s, flax %s (testdata/oracle/*.json).\n\n", c.jax, c.jaxlib, c.flaxV)
	b.WriteString("| group | cases | pass | deliberate | open | fail | not compared |\n|---|---:|---:|---:|---:|---:|---:|\n")
	total := map[string]int{}
	for _, g := range groupOrder {
		n := map[string]int{}
		cases := 0
		for _, o := range c.outcomes {
			if o.group == g {
				n[o.status]++
				cases++
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", g, cases, n[statusPass], n[statusDeliberate],
			n[statusOpen], n[statusFail], n[statusSkipped])
		total["cases"] += cases
		for k, v := range n {
			total[k] += v
		}
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d | %d |\n\n", total["cases"], total[statusPass],
		total[statusDeliberate], total[statusOpen], total[statusFail], total[statusSkipped])
	b.WriteString("`lowering_numeric` runs the `lowering` cases again, for their numbers, so the corpus itself has " +
		"(all minus lowering_numeric) distinct cases.\n\n")

	for _, g := range groupOrder {
		fmt.Fprintf(&b, "## %s\n\n", g)
		if note := c.groupNotes[g]; note != "" {
			b.WriteString(note + "\n\n")
		}
		if strings.HasPrefix(g, "programs") || g == "backcompat" || g == "linalg" || g == "bytecode_versions" {
			c.renderPrograms(&b, g)
			continue
		}
		var rows []outcome
		for _, o := range c.outcomes {
			if o.group == g && o.status != statusPass {
				rows = append(rows, o)
			}
		}
		if len(rows) == 0 {
			b.WriteString("Every case agrees with JAX.\n\n")
			continue
		}
		slices.SortStableFunc(rows, func(a, b outcome) int { return strings.Compare(a.status+a.name, b.status+b.name) })
		skipped := 0
		for _, o := range rows {
			if o.status == statusSkipped {
				skipped++
				continue
			}
			fmt.Fprintf(&b, "- **%s** `%s`", o.status, o.name)
			if o.note != "" {
				fmt.Fprintf(&b, ": %s", o.note)
			}
			b.WriteString("\n")
			for _, d := range o.diffs {
				fmt.Fprintf(&b, "  - %s\n", strings.ReplaceAll(d, "\n", " "))
			}
		}
		if skipped > 0 {
			why := map[string]int{}
			for _, o := range rows {
				if o.status == statusSkipped {
					why[o.note]++
				}
			}
			keys := make([]string, 0, len(why))
			for k := range why {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "- %d case(s) not compared: %s\n", why[k], k)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(reportFooter)
	return b.String(), nil
}

const reportHeader = `# xlamesh vs JAX: the differential oracle report

<!-- Generated by: go test ./internal/oracletest -update-report   (do not edit by hand) -->

xlamesh promises JAX's semantics for meshes, PartitionSpecs, NamedSharding
geometry, logical axis rules, mesh creation, sharding visualisation and the
lowering of sharded programs. This report is what JAX itself says about a
corpus of cases, compared with what xlamesh says.

How it works:

1. ` + "`tools/oracle/cases.py`" + ` is the corpus, as data: cases ported from JAX's
   tests (array_test.py, pjit_test.py, shard_map_test.py, mesh_utils_test.py,
   debugging_primitives_test.py) and flax's partitioning_test.py, plus corners
   (3-D meshes, size-1 axes, tuple axes in both orders, permuted and subset
   device orders, partial replication, Unconstrained, error paths).
2. ` + "`make oracle`" + ` (tools/oracle/generate.sh) asks the pinned JAX on 8 CPU devices
   and writes ` + "`testdata/oracle/<group>.json`" + `; the goldens are checked in.
   ` + "`make oracle-check`" + ` (in ` + "`make test`" + `) regenerates them into a temp dir and
   fails on any difference, so goldens are never hand-edited.
3. ` + "`internal/oracletest`" + ` (run by ` + "`make unit`" + `) compares xlamesh with the goldens.
   Errors match by kind (the mesh sentinel wrapped) and by key phrases both
   messages must contain. A disagreement fails the test unless
   ` + "`internal/oracletest/known_test.go`" + ` lists it as **deliberate** (an intended,
   documented difference) or **open** (reported to the owning package, awaiting
   a fix), pinned to its exact JAX and xlamesh values: if either changes, the
   test fails until the entry is updated.
4. This file is regenerated by ` + "`go test ./internal/oracletest -update-report`" + `; a full
   run of the tests fails when it is stale. The notes "N of M values within T of the
   largest magnitude, not equal" describe the machine that last wrote the file: XLA's
   CPU code, JAX's and the plugin's alike, can round float32 reductions differently
   on a processor with other vector instructions, so those notes are left out of the
   staleness comparison; the outcomes and the tolerance are not.

## Following JAX 0.12

The oracle ran JAX 0.8.1 until November 2026 and runs JAX 0.12.0.1 now (every group
regenerated; the programs JAX 0.8.1 exported stay, frozen, as ` + "`programs081`" + `). What
changed between the two, and what xlamesh did about it:

| JAX 0.12 | xlamesh |
|---|---|
| ` + "`sdy.mesh @mesh = <...> {stablehlo.mesh = {axes = [...]}}`" + `: every mesh symbol restates its axes (and device ids) for StableHLO | followed: ` + "`lower`" + ` prints it (` + "`shardy.MeshOp.JAXString`" + `); ` + "`shardy.MeshOp.String`" + ` stays Shardy's own printing, which has no such dictionary |
| shard_map collectives name their groups by mesh axes, ` + "`#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [...]>`" + `, over a second, lifted ` + "`sdy.mesh @mesh_0`" + ` | followed (Shardy, meshes of more than one device; GSPMD keeps dense groups, as JAX does); ` + "`pjrt`" + ` compiles them as dense groups on plugins below PJRT API 0.115, which cannot read them |
| the GSPMD text of any sharding on a one-device mesh is ` + "`{replicated}`" + ` (0.8.1: ` + "`{devices=[1]<=[1]}`" + `, ` + "`{manual}`" + `, ...) | followed (` + "`shardy.GSPMD`" + `) |
| ` + "`mesh_utils.create_device_mesh`" + ` sorts GPU devices by id (from 0.11) | followed: ` + "`mesh.Create`" + ` sorts them; ` + "`mesh.GPUsInGivenOrder()`" + ` keeps 0.8.1's order |
| ` + "`jax.export`" + ` writes serialization version 12 (named shardings over abstract meshes), StableHLO 1.18, and ` + "`chlo.top_k`" + ` composites with ` + "`is_stable`" + ` | followed: ` + "`jaxexport.Read`" + ` reads versions 1 to 12; ` + "`mlir.Check`" + ` accepts ` + "`is_stable`" + ` (a bool); both corpora run |
| errors: ` + "`IndivisibleError`" + `, specs printed ` + "`P(...)`" + `, some messages end with "This error occurs at source: <file>:<line>" | followed where xlamesh words the same error (key phrases compared); the source suffix names the caller's Python file and is left out of the goldens |
| ` + "`jax.make_mesh`" + ` and ` + "`AbstractMesh(sizes, names)`" + ` default to **Explicit** axes, and values carry sharding types | followed for ` + "`mesh.MakeMesh`" + ` (Explicit axes by default) and the typed values of package ` + "`lower`" + ` (oracle group ` + "`explicit`" + `); deliberate: ` + "`mesh.NewAbstract`" + ` defaults to Auto, as ` + "`mesh.New`" + ` (JAX's ` + "`Mesh(...)`" + `) does, which builds on it; pass ` + "`mesh.Explicit`" + ` for JAX's ` + "`AbstractMesh`" + ` default |
| ` + "`lax.pcast(x, axes, to=\"varying\")`" + ` adds no op to the module | deliberate: ` + "`lower.Function.Pcast`" + ` adds an identity ` + "`stablehlo.convert`" + ` that carries the varying axes (XLA removes it; the values and types are JAX's, oracle case ` + "`shard_map_pcast`" + `) |
| ` + "`lax.rng_bit_generator`" + ` takes its key as u32[4] and bitcasts it | not compared by the oracle: xlamesh's ` + "`RngBitGenerator`" + ` takes the u64[2] state the op itself has; its typing (the state keeps its type, the bits are replicated or take ` + "`RngBitGeneratorOut`" + `'s out sharding) is JAX's rule, checked by lower's tests |
| ` + "`device_put`" + ` of a ` + "`P.UNCONSTRAINED`" + ` sharding fails with a bare ` + "`KeyError`" + ` (its own ` + "`shard_shape`" + ` and ` + "`devices_indices_map`" + ` still read it as None) | deliberate: ` + "`jit.Put`" + ` places it as None, as JAX 0.8.1 and JAX's geometry do; a KeyError is no contract |

`

const reportFooter = `## Lowered-module normalisation

Before lowered modules are compared, both texts (JAX's and xlamesh's) are
normalised: ` + "`loc(...)`" + ` annotations and ` + "`#loc`" + ` lines, ` + "`jax.result_info`" + ` and
` + "`mhlo.layout_mode`" + ` attributes and the module's name are dropped. What is then
compared is structure, not spelling: the module's num_partitions/num_replicas,
the ` + "`sdy.mesh`" + ` symbols, the ` + "`@main`" + ` argument and result types and
` + "`sdy.sharding`" + ` attributes, each ` + "`sdy.sharding_constraint`" + ` (sharding and type),
each ` + "`sdy.manual_computation`" + ` (in/out shardings, manual axes, body argument
types), and the sequence of op names in ` + "`@main`" + ` (nested regions included),
where the compact ` + "`stablehlo.reduce(...) applies stablehlo.add`" + ` counts as a reduce
whose region holds ` + "`stablehlo.add`" + ` and ` + "`stablehlo.return`" + ` (the generic form), and where JAX's scalar ` + "`stablehlo.constant`" + ` followed by its ` + "`broadcast_in_dim`" + ` counts
as one ` + "`stablehlo.constant`" + ` (xlamesh writes the splat directly). Generic
(` + "`\"stablehlo.add\"(...)`" + `) and pretty (` + "`stablehlo.add ...`" + `) op syntax are the same op.
In GSPMD mode the argument and result signatures carry ` + "`mhlo.sharding`" + ` strings,
each ` + "`stablehlo.custom_call`" + ` is named with its target (` + "`@Sharding`" + `,
` + "`@SPMDFullToShardShape`" + `, ` + "`@SPMDShardToFullShape`" + `) and counted with its
` + "`mhlo.sharding`" + ` among the constraints, and a call to a private function (a shard_map's
` + "`@shmap_body`" + `, in JAX and xlamesh alike) is replaced by that function's body.
Numbers computed by JAX are compared exactly (integer-valued data).
`

// toleranceNote matches a report line that says how many float32 values of an output were
// within the tolerance but not bit-equal: a count that depends on the processor the run had.
var toleranceNote = regexp.MustCompile(`(?m)^ *- output \d+ \(float32\): \d+ of \d+ values within [^\n]* of the largest magnitude, not equal\n`)

// withoutToleranceNotes drops the tolerance notes from a report, for the staleness check.
func withoutToleranceNotes(report string) string {
	return toleranceNote.ReplaceAllString(report, "")
}

func TestStalenessIgnoresToleranceNotes(t *testing.T) {
	a := "### p\n\n- `exported`: **pass**\n  - output 0 (float32): 258 of 512 values within 1.1e-07 of the largest magnitude, not equal\n- `mesh_2x4`: **pass**\n"
	b := "### p\n\n- `exported`: **pass**\n- `mesh_2x4`: **pass**\n"
	c := "### p\n\n- `exported`: **FAIL**\n- `mesh_2x4`: **pass**\n"
	if withoutToleranceNotes(a) != withoutToleranceNotes(b) {
		t.Errorf("a tolerance note alone makes the report stale:\n%q\n%q", withoutToleranceNotes(a), withoutToleranceNotes(b))
	}
	if withoutToleranceNotes(a) == withoutToleranceNotes(c) {
		t.Error("an outcome change is not seen once the notes are dropped")
	}
}
