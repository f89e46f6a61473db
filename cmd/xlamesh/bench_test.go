package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/mesh"
)

// TestMain runs main itself when XLAMESH_TEST_MAIN holds arguments (separated by newlines), so
// that tests see the exit status and the two streams of the real command.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("XLAMESH_TEST_MAIN"); ok {
		os.Args = append([]string{"xlamesh"}, strings.Split(args, "\n")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs the command with args in a child process and returns its output and exit status.
func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "XLAMESH_TEST_MAIN="+strings.Join(args, "\n"))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return o.String(), e.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return o.String(), e.String(), 0
}

// matmulConfigs4 are the programs the matmul sweep times on 4 devices: one device, then each
// mesh shape with the strategies that are not the same program as an earlier one (on 4x1,
// "rows x cols" and "contract y" are "rows"; on 2x2 and 1x4, "rows" is 4x1's).
var matmulConfigs4 = []string{"1x1 replicated", "4x1 rows", "4x1 2-D blocks", "2x2 rows x cols", "2x2 contract y",
	"2x2 2-D blocks", "1x4 rows x cols", "1x4 contract y", "1x4 2-D blocks"}

func TestBenchSweepCSV(t *testing.T) {
	const n = 64
	var out, progress bytes.Buffer
	require.NoError(t, bench(&out, &progress, []string{"-kernel", "matmul", "-format", "csv", "-n", strconv.Itoa(n), "-iters", "3", "-devices", "4"}))
	records, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err, out.String())
	require.Equal(t, []string{"rank", "mesh", "devices", "strategy", "seconds", "gflop_s", "speedup", "bytes_moved",
		"collectives", "in", "out", "compile_seconds"}, records[0])
	rows := records[1:]
	require.Len(t, rows, len(matmulConfigs4), out.String())
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return f
	}
	var configs []string
	var base float64
	for _, r := range rows {
		if r[1] == "1x1" {
			base = num(r[4])
		}
	}
	require.Positive(t, base)
	prev := 0.0
	for i, r := range rows {
		assert.Equal(t, strconv.Itoa(i+1), r[0], "ranks count from 1")
		seconds := num(r[4])
		assert.GreaterOrEqual(t, seconds, prev, "rows are ranked fastest first: %v", r)
		prev = seconds
		// The rate and speed-up follow from the (6-digit) time: 2n³ flops per call.
		assert.InEpsilon(t, 2*math.Pow(n, 3)/seconds/1e9, num(r[5]), 1e-4, r)
		assert.InEpsilon(t, base/seconds, num(r[6]), 1e-4, r)
		configs = append(configs, r[1]+" "+r[3])
		want := map[string]string{"1x1": "1", "4x1": "4", "2x2": "4", "1x4": "4"}[r[1]]
		assert.Equal(t, want, r[2], "devices of %v", r)
		switch r[1] + " " + r[3] {
		case "2x2 contract y":
			// A P('x', 'y') x B P('y', None): each device's f32[32,64] partial product is summed
			// over y, pairs of devices: 2(2-1)/2 x 8192 bytes.
			assert.Equal(t, []string{"8192", "all-reduce", "P('x', 'y') P('y', None)", "P('x', None)"}, r[7:11])
		case "1x1 replicated", "2x2 rows x cols", "4x1 rows":
			assert.Equal(t, []string{"0", "-"}, r[7:9], "%v communicates nothing", r)
		}
	}
	assert.ElementsMatch(t, matmulConfigs4, configs)
	// Progress on stderr: what is compiled and timed, before the table is printed.
	assert.Contains(t, progress.String(), fmt.Sprintf("matmul f32[%d,%d] x f32[%d,%d] -> f32[%d,%d] on 4 cpu devices: 9 configurations, 3 timed calls each", n, n, n, n, n, n))
	assert.Regexp(t, `\[1/9\] 1x1 replicated: compiling\.\.\. \S+, checking\.\.\. \S+, timing 3 calls\.\.\. \S+: \S+ per call\n`, progress.String())
	assert.Contains(t, progress.String(), "[9/9] 1x4 2-D blocks: compiling...")
}

func TestBenchSweepTableAndKernels(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, bench(&out, io.Discard, []string{"-n", "64", "-iters", "1", "-devices", "4"}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 2+len(matmulConfigs4), out.String())
	assert.Equal(t, "matmul f32[64,64] x f32[64,64] -> f32[64,64] on 4 cpu devices: median of 1 calls, fastest first", lines[0])
	assert.Equal(t, []string{"rank", "mesh", "strategy", "per", "call", "GFLOP/s", "speed-up", "moved/dev", "collectives",
		"shardings", "(in", "->", "out)"}, strings.Fields(lines[1]))
	for i, l := range lines[2:] {
		assert.True(t, strings.HasPrefix(l, strconv.Itoa(i+1)+" "), l)
	}

	// Every kernel lowers, checks its result against the host on every strategy, and ranks.
	for _, k := range []string{"mlp", "attention"} {
		out.Reset()
		require.NoError(t, bench(&out, io.Discard, []string{"-kernel", k, "-n", "16", "-iters", "1", "-devices", "4", "-format", "json"}))
		var got map[string]sweepReport
		require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
		r := got["sweep"]
		assert.Equal(t, k, r.Kernel)
		assert.Equal(t, "GFLOP/s", r.Unit)
		seen := map[string]bool{}
		for i, row := range r.Rows {
			assert.Equal(t, i+1, row.Rank)
			assert.Positive(t, row.Rate)
			require.NotNil(t, row.Speedup)
			seen[row.Strategy] = true
		}
		for _, s := range findKernel(k).strategies {
			assert.True(t, seen[s.name], "%s: strategy %s was timed", k, s.name)
		}
	}
}

// svgDoc is what TestBenchPlot reads of an SVG file.
type svgDoc struct {
	XMLName xml.Name  `xml:"svg"`
	Width   string    `xml:"width,attr"`
	Groups  []svgNode `xml:"g"`
}

type svgNode struct {
	Paths  []svgPath `xml:"path"`
	Texts  []string  `xml:"text"`
	Groups []svgNode `xml:"g"`
}

type svgPath struct {
	Style string `xml:"style,attr"`
}

func (n svgNode) walk(f func(svgNode)) {
	f(n)
	for _, g := range n.Groups {
		g.walk(f)
	}
}

func TestBenchPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.svg")
	var out bytes.Buffer
	require.NoError(t, bench(&out, io.Discard, []string{"-n", "64", "-iters", "1", "-devices", "4", "-format", "json", "-plot", path}))
	var reports map[string]sweepReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &reports))
	r := reports["sweep"]
	require.Len(t, r.Rows, len(matmulConfigs4))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc svgDoc
	require.NoError(t, xml.Unmarshal(data, &doc), "the chart is well-formed XML")
	assert.Equal(t, "576pt", doc.Width, "8 inches wide")
	var texts []string
	bars := 0
	for _, g := range doc.Groups {
		g.walk(func(n svgNode) {
			texts = append(texts, n.Texts...)
			for _, p := range n.Paths {
				if strings.Contains(p.Style, "fill:#1F77B4") {
					bars++
				}
			}
		})
	}
	assert.Equal(t, len(r.Rows), bars, "one filled bar per configuration")
	assert.Contains(t, texts, "matmul f32[64,64] x f32[64,64] -> f32[64,64] on 4 cpu devices")
	assert.Contains(t, texts, "GFLOP/s (higher is faster)")
	for _, row := range r.Rows {
		assert.Contains(t, texts, fmt.Sprintf("%d. %s %s (%.2fx)", row.Rank, row.Mesh, row.Strategy, *row.Speedup))
		assert.Contains(t, texts, fmt.Sprintf(" %.1f", row.Rate))
	}
	// Fastest at the top: the labels are drawn bottom to top, so rank 1 comes last.
	var labels []string
	for _, s := range texts {
		if len(s) > 2 && s[0] >= '1' && s[0] <= '9' && strings.Contains(s, ". ") {
			labels = append(labels, s)
		}
	}
	require.Len(t, labels, len(r.Rows))
	assert.True(t, strings.HasPrefix(labels[len(labels)-1], "1. "), labels)
}

func TestBenchFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mp.mlir")
	require.NoError(t, os.WriteFile(path, []byte(modelParallelMLIR), 0o644))
	var out bytes.Buffer
	require.NoError(t, bench(&out, io.Discard, []string{"-kernel", path, "-iters", "2", "-format", "json"}))
	var reports map[string]sweepReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &reports), out.String())
	r := reports["sweep"]
	assert.Equal(t, "GB/s", r.Unit)
	require.Len(t, r.Rows, 1)
	row := r.Rows[0]
	assert.Equal(t, "as written", row.Strategy)
	assert.Equal(t, 8, row.Devices)
	assert.Equal(t, []string{"f32[64,8]", "f32[8,64]"}, row.In, "per-device shapes")
	assert.Equal(t, []string{"f32[64,64]"}, row.Out)
	assert.Nil(t, row.Speedup, "a file is timed only as written")
	assert.Equal(t, "all-reduce", row.Collectives)
	assert.Equal(t, int64(2*7*64*64*4/8), row.BytesMoved)
	// Arguments and results of every device, per second.
	assert.InEpsilon(t, float64(8*(2*64*8+64*64)*4)/row.Seconds/1e9, row.Rate, 1e-9)
}

// modelParallelMLIR is a model-parallel matmul on 8 devices: the contracted dimension split,
// the partial products summed by an all-reduce.
const modelParallelMLIR = `module @jit_mp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=8]>
  func.func public @main(%a: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %b: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}`

func TestBenchUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-iters", "0"}, "-iters must be positive, got 0"},
		{[]string{"-n", "0"}, "-n must be positive, got 0"},
		{[]string{"-n", "-5"}, "-n must be positive, got -5"},
		{[]string{"-n", "100"}, "-n 100 is not a multiple of 8: the 8x1 and 1x8 meshes of 8 devices could not split it evenly (try -n 104)"},
		{[]string{"-n", "30", "-devices", "4"}, "-n 30 is not a multiple of 4"},
		{[]string{"-chain", "0", "-what", "chain"}, "-chain must be positive"},
		{[]string{"-mib", "-1", "-what", "transfer"}, "-mib must be between 1 and 16384, got -1"},
		{[]string{"-what", "sweep,memcpy"}, `unknown figure "memcpy" (have sweep, chain, transfer)`},
		{[]string{"-what", "matmul", "-kernel", "mlp"}, "-what matmul is the sweep of -kernel matmul"},
		{[]string{"-kernel", "conv"}, `-kernel "conv" is not one of matmul, mlp, attention, nor a readable StableHLO file`},
		{[]string{"-kernel", "mlp", "-what", "chain"}, "-kernel chooses what the sweep times"},
		{[]string{"-format", "xml"}, `-format "xml": want table, csv or json`},
		{[]string{"-format", "csv", "-what", "sweep,chain"}, "-format csv writes one table"},
		{[]string{"-plot", "out.png"}, "name it .svg"},
		{[]string{"-plot", "/no/such/dir/out.svg"}, "no directory /no/such/dir"},
		{[]string{"-plot", "x.svg", "-what", "chain"}, "-plot draws the sweep"},
		{[]string{"-partitioner", "auto"}, `-partitioner "auto": want shardy or gspmd`},
		{[]string{"-what", "transfer", "-mib", "1", "-devices", "6"}, "transfer: -mib 1: 32 rows do not split over 3 devices"},
		{[]string{"matmul"}, `unexpected argument "matmul"`},
	} {
		err := bench(io.Discard, io.Discard, append(tc.args, "-q"))
		var ue *usageErr
		require.ErrorAs(t, err, &ue, "%v: %v", tc.args, err)
		assert.ErrorContains(t, err, tc.err, tc.args)
	}
	path := filepath.Join(t.TempDir(), "mp.mlir")
	require.NoError(t, os.WriteFile(path, []byte(modelParallelMLIR), 0o644))
	var ue *usageErr
	assert.ErrorAs(t, bench(io.Discard, io.Discard, []string{"-kernel", path, "-n", "64"}), &ue)
}

// TestBenchExitStatus runs the command: a bad flag is a usage error, exit status 2, with the
// message and the command's flags on stderr; a good run exits 0.
func TestBenchExitStatus(t *testing.T) {
	for _, args := range [][]string{{"-iters", "0"}, {"-n", "100"}, {"-n", "0"}, {"-n", "-5"}, {"-nope"}} {
		stdout, stderr, code := runMain(t, append([]string{"bench"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.Empty(t, stdout, args)
		assert.Contains(t, stderr, "-kernel string", "%v: the usage follows the message", args)
	}
	stdout, stderr, code := runMain(t, "bench", "-n", "8", "-iters", "1", "-devices", "2", "-format", "csv")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "rank,mesh,devices,strategy,"), stdout)
	assert.Contains(t, stderr, "[1/")
	_, stderr, code = runMain(t, "inspect", "-format", "yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `inspect: -format "yaml": want table or json`)
}

func TestProgramKey(t *testing.T) {
	ds := mesh.SimDevices(8)
	m := func(x, y int) mesh.Mesh { return mesh.MustNew(ds, []int{x, y}, "x", "y") }
	rows, blocks := matmulKernel.strategies[0], matmulKernel.strategies[1]
	assert.Equal(t, programKey(rows, m(8, 1)), programKey(blocks, m(8, 1)), "on 8x1, y splits nothing")
	assert.Equal(t, programKey(rows, m(8, 1)), programKey(rows, m(2, 4)), "('x', 'y') is every device in order on any shape")
	assert.NotEqual(t, programKey(blocks, m(2, 4)), programKey(blocks, m(4, 2)))
	assert.Equal(t, "2x4 (x) (None,y) (x,y)", programKey(blocks, m(2, 4)))
	assert.Equal(t, "(all) () (all)", programKey(rows, m(1, 8)))

	cfgs, err := sweepConfigs(matmulKernel, ds[:4])
	require.NoError(t, err)
	var got []string
	for _, c := range cfgs {
		got = append(got, meshName(c.m)+" "+c.s.name)
	}
	assert.Equal(t, matmulConfigs4, got)
}

func TestSummarizeAndHumanBytes(t *testing.T) {
	assert.Equal(t, "512 B", humanBytes(512))
	assert.Equal(t, "1.5 KiB", humanBytes(1536))
	assert.Equal(t, "3.0 MiB", humanBytes(3<<20))
	assert.Equal(t, "2.0 GiB", humanBytes(2<<30))
	s, n := summarize(nil)
	assert.Equal(t, "-", s)
	assert.Zero(t, n)
}

func TestModulePartitions(t *testing.T) {
	n, err := modulePartitions(modelParallelMLIR)
	require.NoError(t, err)
	assert.Equal(t, 8, n)
	n, err = modulePartitions("module {\n  // mhlo.num_partitions = 4 in a comment is not an attribute\n}")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = modulePartitions("module attributes {mhlo.num_partitions = 0 : i32} {}")
	assert.ErrorContains(t, err, "want a positive integer")
}

func TestCheckProduct(t *testing.T) {
	const n = 16
	a := make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%17) / 17
	}
	c := make([]float32, n*n)
	for i := range n {
		for j := range n {
			for l := range n {
				c[i*n+j] += a[i*n+l] * a[l*n+j]
			}
		}
	}
	require.NoError(t, checkProduct(c, a, a, n, n, n))
	c[(7919%n)*n+(104729%n)] += 0.5 // the entry of the first sample
	assert.ErrorContains(t, checkProduct(c, a, a, n, n, n), "product C[")
	assert.ErrorContains(t, checkProduct(c[:n], a, a, n, n, n), "product has 16 elements, want 256")
	assert.True(t, slices.Equal(squarest(8), []int{2, 4}) && slices.Equal(squarest(6), []int{2, 3}) && slices.Equal(squarest(7), []int{1, 7}))
}
