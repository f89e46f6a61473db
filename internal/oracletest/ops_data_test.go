package oracletest

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/random"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// opsTensor is one tensor of an op group's golden (tools/oracle/ops_*.py): numpy's dtype
// name, the shape and the flat row-major values (numbers, bools, or "nan", "inf", "-inf").
type opsTensor struct {
	DType  string            `json:"dtype"`
	Shape  []int             `json:"shape"`
	Values []json.RawMessage `json:"values"`
	Hex    string            `json:"hex"` // raw bytes, for the types beyond opsutil.PLAIN
}

// opsCase is one case of an op group: a JAX expression run on fixed inputs.
type opsCase struct {
	Name    string      `json:"name"`
	JAX     string      `json:"jax"`
	Inputs  []opsTensor `json:"inputs"`
	Outputs []opsTensor `json:"outputs"`
}

// opsBuilder builds a case's op with package stablehlo: args are @main's arguments, one
// per input, and the results are compared with JAX's outputs. call shows the stablehlo
// call in the report; tol is the relative tolerance for float outputs (0: bit-exact, NaN
// matching NaN).
type opsBuilder struct {
	call  string
	build func(f *stablehlo.Function, args []stablehlo.Value) []stablehlo.Value
	tol   float64
}

// opsDTypes maps numpy's dtype names to dtypes (programDTypes: every element type).
var opsDTypes = programDTypes

// runOpsGroup compares every case of testdata/oracle/<group>.json with its builder; a
// case without a builder, or a builder without a case, fails. The report's section for
// the group is note followed by a table of the cases and their JAX expressions.
func runOpsGroup(t *testing.T, group, note string, builders map[string]opsBuilder) {
	g := loadGolden[opsCase](t, group)
	var table strings.Builder
	table.WriteString(note + "\n\n| case | JAX | stablehlo |\n|---|---|---|\n")
	for _, c := range g.Cases {
		fmt.Fprintf(&table, "| %s | `%s` | `%s` |\n", c.Name, strings.ReplaceAll(c.JAX, "|", "\\|"),
			strings.ReplaceAll(builders[c.Name].call, "|", "\\|"))
	}
	report.noteGroup(group, strings.TrimSuffix(table.String(), "\n"))
	client := pjrttest.Client(t)
	seen := map[string]bool{}
	for _, c := range g.Cases {
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			b, ok := builders[c.Name]
			if !ok {
				t.Fatalf("%s/%s: no stablehlo builder for this case", group, c.Name)
			}
			diffs, err := runOpsCase(t, client, c, b)
			if err != nil {
				diffs = []string{"xlamesh: " + err.Error()}
			}
			report.check(t, group, c.Name, diffs)
		})
	}
	for name := range builders {
		if !seen[name] {
			t.Errorf("%s: builder %q has no case in the golden (regenerate with `make oracle`)", group, name)
		}
	}
}

func runOpsCase(t testing.TB, client *pjrt.Client, c opsCase, b opsBuilder) ([]string, error) {
	m := stablehlo.NewModule("jit_" + c.Name)
	f := m.Main()
	var args []stablehlo.Value
	for _, in := range c.Inputs {
		d, ok := opsDTypes[in.DType]
		if !ok {
			return nil, fmt.Errorf("input dtype %q", in.DType)
		}
		args = append(args, f.Arg(stablehlo.NewShape(d, in.Shape...)))
	}
	f.Return(b.build(f, args)...)
	text, err := m.Build()
	if err != nil {
		return nil, err
	}
	dev := client.Devices()[0]
	exe, err := client.Compile(text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	if gpuRefused(c.Name, err) { // as it refuses JAX's program (gpu_test.go)
		t.Logf("%s: the GPU compiler refuses it, as expected: %v", c.Name, err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	defer exe.Close()
	var bufs []*pjrt.Buffer
	defer func() {
		for _, x := range bufs {
			x.Close()
		}
	}()
	for i, in := range c.Inputs {
		raw, err := opsEncode(in)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		buf, err := client.BufferFromBytes(dev, opsDTypes[in.DType], in.Shape, raw)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		bufs = append(bufs, buf)
	}
	outs, err := exe.Execute([][]*pjrt.Buffer{bufs})
	if err != nil {
		return nil, fmt.Errorf("execute: %w", err)
	}
	defer func() {
		for _, x := range outs[0] {
			x.Close()
		}
	}()
	if len(outs[0]) != len(c.Outputs) {
		return []string{fmt.Sprintf("JAX has %d outputs, xlamesh %d", len(c.Outputs), len(outs[0]))}, nil
	}
	var diffs []string
	for i, want := range c.Outputs {
		got := outs[0][i]
		wd := opsDTypes[want.DType]
		if got.DType() != wd || fmt.Sprint(got.Shape().Dims()) != fmt.Sprint(want.Shape) {
			diffs = append(diffs, fmt.Sprintf("output %d: JAX %s%v, xlamesh %v%v", i, want.DType, want.Shape, got.DType(), got.Shape().Dims()))
			continue
		}
		raw := make([]byte, got.Shape().Bytes())
		if err := got.CopyToHost(raw); err != nil {
			return nil, err
		}
		wantRaw, err := opsEncode(want)
		if err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
		diffs = append(diffs, opsCompare(i, wd, wantRaw, raw, b.tol)...)
	}
	return diffs, nil
}

// opsEncode returns t's values as the row-major little-endian bytes of its dtype.
func opsEncode(t opsTensor) ([]byte, error) {
	d, ok := opsDTypes[t.DType]
	if !ok {
		return nil, fmt.Errorf("dtype %q", t.DType)
	}
	if t.Hex != "" {
		return hex.DecodeString(t.Hex)
	}
	n := 1
	for _, s := range t.Shape {
		n *= s
	}
	if len(t.Values) != n {
		return nil, fmt.Errorf("%d values for shape %v", len(t.Values), t.Shape)
	}
	size := shapes.ElementBytes(d)
	out := make([]byte, n*size)
	for i, rv := range t.Values {
		s := string(rv)
		var bits uint64
		switch {
		case d == dtypes.Bool:
			if s == "true" {
				bits = 1
			}
		case d.IsFloat():
			var f float64
			switch s {
			case `"nan"`:
				f = math.NaN()
			case `"inf"`:
				f = math.Inf(1)
			case `"-inf"`:
				f = math.Inf(-1)
			default:
				var err error
				if f, err = strconv.ParseFloat(s, 64); err != nil {
					return nil, err
				}
			}
			switch d {
			case dtypes.Float64:
				bits = math.Float64bits(f)
			case dtypes.Float32:
				bits = uint64(math.Float32bits(float32(f)))
			case dtypes.BFloat16: // the golden's values are exact bf16 values
				bits = uint64(math.Float32bits(float32(f)) >> 16)
			}
		case d.IsUnsigned():
			u, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, err
			}
			bits = u
		default:
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, err
			}
			bits = uint64(v)
		}
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], bits)
		copy(out[i*size:], buf[:size])
	}
	return out, nil
}

// opsCompare lists the elements of output i where got differs from want: integers, bools
// and (with tol 0) floats bit for bit, floats otherwise within tol relative to JAX's
// value; NaN matches NaN of any payload. On a GPU a float also passes within gpuTolerance
// (gpu_test.go).
func opsCompare(i int, d dtypes.DType, want, got []byte, tol float64) []string {
	switch d {
	case dtypes.Complex64: // as float32 (real, imaginary) pairs
		return opsCompare(i, dtypes.Float32, want, got, tol)
	case dtypes.Complex128:
		return opsCompare(i, dtypes.Float64, want, got, tol)
	}
	size := shapes.ElementBytes(d)
	var diffs []string
	bad := 0
	for k := 0; k < len(want); k += size {
		var wb, gb [8]byte
		copy(wb[:], want[k:k+size])
		copy(gb[:], got[k:k+size])
		w, g := binary.LittleEndian.Uint64(wb[:]), binary.LittleEndian.Uint64(gb[:])
		if w == g {
			continue
		}
		if d.IsFloat() {
			wf, gf := opsFloat(d, w), opsFloat(d, g)
			if (math.IsNaN(wf) && math.IsNaN(gf)) || (tol > 0 && math.Abs(wf-gf) <= tol*math.Abs(wf)) || gpuClose(d, wf, gf) {
				continue
			}
			if bad < 4 {
				diffs = append(diffs, fmt.Sprintf("output %d[%d]: JAX %v, xlamesh %v", i, k/size, wf, gf))
			}
		} else if bad < 4 {
			diffs = append(diffs, fmt.Sprintf("output %d[%d]: JAX %#x, xlamesh %#x", i, k/size, w, g))
		}
		bad++
	}
	if bad > 4 {
		diffs = append(diffs, fmt.Sprintf("output %d: %d elements differ in all", i, bad))
	}
	return diffs
}

func opsFloat(d dtypes.DType, bits uint64) float64 {
	switch d {
	case dtypes.Float64:
		return math.Float64frombits(bits)
	case dtypes.BFloat16:
		return float64(math.Float32frombits(uint32(bits) << 16))
	}
	return float64(math.Float32frombits(uint32(bits)))
}

// TestOpsData compares stablehlo's gather/scatter, convolution, window, bit, math and
// random ops, and package random's jax.random functions, with the same JAX ops
// (testdata/oracle/ops_data.json).
func TestOpsData(t *testing.T) {
	runOpsGroup(t, "ops_data", "Each case builds one op with package `stablehlo` (gather/scatter, convolution, "+
		"reduce_window, bit and math ops, rng_bit_generator) or one function of package `random` (jax.random) and runs it on the pinned CPU plugin on the inputs JAX was given; "+
		"the JAX expression is in tools/oracle/ops_data.py. Integers, bools and bf16 compare bit for bit, "+
		"and f32 too except the transcendental functions (erf, erf_inv, expm1, log1p, atan2, tan, cbrt, "+
		"and jax.random.normal, which uses erf_inv), "+
		"compared at 1e-6 relative: their polynomials may differ between XLA builds and CPU instruction sets "+
		"(where the goldens were made, the plugin and JAX agree on them bit for bit).", opsDataBuilders)
}

// op1 adapts a one-result builder.
func op1(call string, build func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value) opsBuilder {
	return opsBuilder{call: call, build: func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		return []stablehlo.Value{build(f, a)}
	}}
}

// rows are the dimension numbers of lax.scatter on whole rows of a matrix by a vector of
// row indices (given as idx[:, None]).
var rows = stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}

var opsDataBuilders = map[string]opsBuilder{
	"take_axis0":        op1("f.Take(x, idx, 0)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Take(a[0], a[1], 0) }),
	"take_axis1_int8":   op1("f.Take(x, idx, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Take(a[0], a[1], 1) }),
	"take_axis2_uint8":  op1("f.Take(x, idx, 2)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Take(a[0], a[1], 2) }),
	"take_scalar_index": op1("f.Take(x, i, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Take(a[0], a[1], 1) }),
	"gather_batching": op1("f.Gather(x, starts, GatherParams{...spec example})", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Gather(a[0], a[1], stablehlo.GatherParams{
			Dims: stablehlo.GatherDims{OffsetDims: []int{3, 4}, CollapsedSliceDims: []int{1}, OperandBatchingDims: []int{0},
				StartIndicesBatchingDims: []int{1}, StartIndexMap: []int{2, 1}, IndexVectorDim: 3},
			SliceSizes: []int{1, 1, 2, 2}})
	}),
	"gather_points": op1("f.Gather(x, pts, collapsed [0, 1], sizes [1, 1])", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Gather(a[0], a[1], stablehlo.GatherParams{
			Dims:       stablehlo.GatherDims{CollapsedSliceDims: []int{0, 1}, StartIndexMap: []int{0, 1}, IndexVectorDim: 1},
			SliceSizes: []int{1, 1}})
	}),
	"gather_windows": op1("f.Gather(x, starts, offset [1, 2], sizes [2, 2])", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Gather(a[0], a[1], stablehlo.GatherParams{
			Dims:       stablehlo.GatherDims{OffsetDims: []int{1, 2}, StartIndexMap: []int{0}, IndexVectorDim: 1},
			SliceSizes: []int{2, 2}})
	}),
	"scatter_add": op1("f.ScatterAdd(x, idx, u)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.ScatterAdd(a[0], a[1], a[2])
	}),
	"scatter_add_scalar": op1("f.ScatterAdd(x, idx, f.Constant(1.0))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.ScatterAdd(a[0], a[1], f.Constant(1.0))
	}),
	"scatter_add_int2d": op1("f.ScatterAdd(x, idx, u)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.ScatterAdd(a[0], a[1], a[2])
	}),
	"scatter_set": scatterRows(0, true),
	"scatter_max": scatterRows(stablehlo.Max, false),
	"scatter_min": scatterRows(stablehlo.Min, false),
	"scatter_mul": scatterRows(stablehlo.Prod, false),
	"scatter_func_sub": op1("f.ScatterFunc(x, idx, u, rows, g.Sub)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.ScatterFunc(a[0], f.Reshape(a[1], 3, 1), a[2], stablehlo.ScatterParams{Dims: rows},
			func(g *stablehlo.Function, old, upd stablehlo.Value) stablehlo.Value { return g.Sub(old, upd) })
	}),
	"scatter_batching": op1("f.Scatter(x, starts, u, ScatterParams{...spec example, Combine: Sum})", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Scatter(a[0], a[1], a[2], stablehlo.ScatterParams{
			Dims: stablehlo.ScatterDims{UpdateWindowDims: []int{3, 4}, InsertedWindowDims: []int{1}, InputBatchingDims: []int{0},
				ScatterIndicesBatchingDims: []int{1}, ScatterDimsToOperandDims: []int{2, 1}, IndexVectorDim: 3},
			Combine: stablehlo.Sum})
	}),
	"conv_nhwc_same":         convCase("NHWC", "HWIO", "NHWC", stablehlo.ConvParams{Padding: stablehlo.PadSame}),
	"conv_nhwc_same_stride2": convCase("NHWC", "HWIO", "NHWC", stablehlo.ConvParams{Strides: []int{2, 2}, Padding: stablehlo.PadSame}),
	"conv_nchw_pad_dilation": convCase("NCHW", "OIHW", "NCHW", stablehlo.ConvParams{Strides: []int{2, 1},
		Padding: stablehlo.Pads([2]int{1, 2}, [2]int{0, 1}), RhsDilation: []int{2, 1}}),
	"conv_lhs_dilation": convCase("NHWC", "HWIO", "NHWC", stablehlo.ConvParams{Padding: stablehlo.Pads([2]int{2, 2}, [2]int{1, 1}),
		LhsDilation: []int{2, 2}}),
	"conv_depthwise":      convCase("NHWC", "HWIO", "NHWC", stablehlo.ConvParams{Padding: stablehlo.PadSame, FeatureGroupCount: 4}),
	"conv_feature_groups": convCase("NHWC", "HWIO", "NHWC", stablehlo.ConvParams{Padding: stablehlo.PadValid, FeatureGroupCount: 2}),
	"conv_batch_groups":   convCase("NHWC", "HWIO", "NHWC", stablehlo.ConvParams{Padding: stablehlo.PadValid, BatchGroupCount: 2}),
	"conv_1d_same_lower":  convCase("NWC", "WIO", "NWC", stablehlo.ConvParams{Strides: []int{2}, Padding: stablehlo.PadSameLower}),
	"conv_3d":             convCase("NDHWC", "DHWIO", "NDHWC", stablehlo.ConvParams{Strides: []int{1, 2, 1}, Padding: stablehlo.PadSame}),
	"conv_mixed_layout":   convCase("NCHW", "HWIO", "NHWC", stablehlo.ConvParams{Padding: stablehlo.PadSame}),
	"conv_int32":          convCase("NHWC", "HWIO", "NHWC", stablehlo.ConvParams{}),

	"reduce_window_max_same": windowCase(stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{1, 3, 3, 1}, Strides: []int{1, 2, 2, 1}, Padding: stablehlo.PadSame}),
	"reduce_window_sum_dilations": windowCase(stablehlo.Sum, stablehlo.ReduceWindowParams{Window: []int{2, 2}, Padding: stablehlo.Pads([2]int{1, 0}, [2]int{0, 2}),
		BaseDilations: []int{2, 1}, WindowDilations: []int{1, 2}}),
	"reduce_window_same_window_dilation": windowCase(stablehlo.Sum, stablehlo.ReduceWindowParams{Window: []int{2, 3}, Strides: []int{2, 1}, Padding: stablehlo.PadSame,
		WindowDilations: []int{2, 2}}),
	"reduce_window_min_int": windowCase(stablehlo.Min, stablehlo.ReduceWindowParams{Window: []int{2, 2}, Strides: []int{2, 3}}),
	"reduce_window_prod":    windowCase(stablehlo.Prod, stablehlo.ReduceWindowParams{Window: []int{1, 2}}),
	"reduce_window_func": op1("f.ReduceWindowFunc(x, 2.0, {Window: [3, 2], Strides: [1, 2], Padding: Pads({1, 1}, {0, 0})}, g.Max)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.ReduceWindowFunc(a[0], f.Constant(2.0), stablehlo.ReduceWindowParams{Window: []int{3, 2}, Strides: []int{1, 2},
			Padding: stablehlo.Pads([2]int{1, 1}, [2]int{0, 0})}, func(g *stablehlo.Function, acc, v stablehlo.Value) stablehlo.Value { return g.Max(acc, v) })
	}),
	"max_pool": op1("f.MaxPool(x, [2, 2], [2, 2], PadSame)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.MaxPool(a[0], []int{2, 2}, []int{2, 2}, stablehlo.PadSame)
	}),
	"max_pool_no_batch": op1("f.MaxPool(x, [3], nil, PadValid)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.MaxPool(a[0], []int{3}, nil, stablehlo.PadValid)
	}),
	"min_pool_pairs": op1("f.MinPool(x, [2, 3], [1, 2], Pads({0, 1}, {1, 1}))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.MinPool(a[0], []int{2, 3}, []int{1, 2}, stablehlo.Pads([2]int{0, 1}, [2]int{1, 1}))
	}),
	"sum_pool": op1("f.SumPool(x, [2, 3], [1, 2], Pads({0, 1}, {1, 1}))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.SumPool(a[0], []int{2, 3}, []int{1, 2}, stablehlo.Pads([2]int{0, 1}, [2]int{1, 1}))
	}),
	"avg_pool_same": op1("f.AvgPool(x, [3, 3], nil, PadSame, true)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.AvgPool(a[0], []int{3, 3}, nil, stablehlo.PadSame, true)
	}),
	"avg_pool_exclude_pad": op1("f.AvgPool(x, [3, 3], [2, 2], PadSame, false)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.AvgPool(a[0], []int{3, 3}, []int{2, 2}, stablehlo.PadSame, false)
	}),
	"shift_left":                binCase("f.ShiftLeft(x, s)", (*stablehlo.Function).ShiftLeft, 0),
	"shift_right_arithmetic":    binCase("f.ShiftRightArithmetic(x, s)", (*stablehlo.Function).ShiftRightArithmetic, 0),
	"shift_right_logical":       binCase("f.ShiftRightLogical(x, s)", (*stablehlo.Function).ShiftRightLogical, 0),
	"shift_right_logical_uint8": binCase("f.ShiftRightLogical(x, s)", (*stablehlo.Function).ShiftRightLogical, 0),
	"shift_left_scalar": op1("f.ShiftLeft(x, f.Constant(3))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.ShiftLeft(a[0], f.Constant(3))
	}),
	"population_count":       unCase("f.PopulationCount(x)", (*stablehlo.Function).PopulationCount, 0),
	"population_count_uint8": unCase("f.PopulationCount(x)", (*stablehlo.Function).PopulationCount, 0),
	"clz":                    unCase("f.CountLeadingZeros(x)", (*stablehlo.Function).CountLeadingZeros, 0),
	"bitcast_f32_u32":        bitcastCase(dtypes.Uint32),
	"bitcast_f32_u8":         bitcastCase(dtypes.Uint8),
	"bitcast_u8_i32":         bitcastCase(dtypes.Int32),
	"bitcast_f32_bf16":       bitcastCase(dtypes.BFloat16),
	"bitcast_i16_bf16":       bitcastCase(dtypes.BFloat16),

	"clamp_scalar_bounds": op1("f.Clamp(f.Constant(-1.0), x, f.Constant(2.0))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Clamp(f.Constant(-1.0), a[0], f.Constant(2.0))
	}),
	"clamp_array_bounds": op1("f.Clamp(lo, x, hi)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Clamp(a[0], a[1], a[2])
	}),
	"clamp_int": op1("f.Clamp(f.Constant(0), x, f.Constant(10))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Clamp(f.Constant(0), a[0], f.Constant(10))
	}),
	"clamp_nan": op1("f.Clamp(f.Constant(0.0), x, f.Constant(1.0))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Clamp(f.Constant(0.0), a[0], f.Constant(1.0))
	}),
	"erf":                         unCase("f.Erf(x)", (*stablehlo.Function).Erf, 1e-6),
	"erf_scipy_bf16":              unCase("f.Erf(x)", (*stablehlo.Function).Erf, 0),
	"erf_inv":                     unCase("f.ErfInv(x)", (*stablehlo.Function).ErfInv, 1e-6),
	"is_finite":                   unCase("f.IsFinite(x)", (*stablehlo.Function).IsFinite, 0),
	"expm1":                       unCase("f.Expm1(x)", (*stablehlo.Function).Expm1, 1e-6),
	"log1p":                       unCase("f.Log1p(x)", (*stablehlo.Function).Log1p, 1e-6),
	"atan2":                       binCase("f.Atan2(y, x)", (*stablehlo.Function).Atan2, 1e-6),
	"round_away":                  unCase("f.Round(x)", (*stablehlo.Function).Round, 0),
	"round_even":                  unCase("f.RoundEven(x)", (*stablehlo.Function).RoundEven, 0),
	"tan":                         unCase("f.Tan(x)", (*stablehlo.Function).Tan, 1e-6),
	"cbrt":                        unCase("f.Cbrt(x)", (*stablehlo.Function).Cbrt, 1e-6),
	"rng_bit_generator_default":   rngCase(stablehlo.RngDefault, dtypes.Uint32, 3, 5),
	"rng_bit_generator_three_fry": rngCase(stablehlo.RngThreeFry, dtypes.Uint32, 3, 5),
	"rng_bit_generator_philox":    rngCase(stablehlo.RngPhilox, dtypes.Uint32, 3, 5),
	"rng_bit_generator_uint8":     rngCase(stablehlo.RngThreeFry, dtypes.Uint8, 2, 3, 4),
	"random_bits_u32":             randomBitsCase(dtypes.Uint32, 3, 4),
	"random_bits_u32_scalar":      randomBitsCase(dtypes.Uint32),
	"random_bits_u8":              randomBitsCase(dtypes.Uint8, 5, 3),
	"random_bits_u16":             randomBitsCase(dtypes.Uint16, 7),
	"random_bits_u64":             randomBitsCase(dtypes.Uint64, 2, 3),
	"random_key_int64":            op1("random.Key(f, seed)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return random.Key(f, a[0]) }),
	"random_key":                  op1("random.Key(f, seed)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return random.Key(f, a[0]) }),
	"random_uniform": op1("random.Uniform(f, key, dtypes.Float32, -2, 3, 4, 5)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return random.Uniform(f, a[0], dtypes.Float32, -2, 3, 4, 5)
	}),
	"random_uniform_bf16": op1("random.Uniform(f, key, dtypes.BFloat16, 0, 1, 16)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return random.Uniform(f, a[0], dtypes.BFloat16, 0, 1, 16)
	}),
	"random_normal": {call: "random.Normal(f, key, dtypes.Float32, 8, 8)", tol: 1e-6, build: func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		return []stablehlo.Value{random.Normal(f, a[0], dtypes.Float32, 8, 8)}
	}},
	"random_normal_bf16": op1("random.Normal(f, key, dtypes.BFloat16, 16)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return random.Normal(f, a[0], dtypes.BFloat16, 16)
	}),
	"random_split": op1("random.Split(f, key, 3)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return random.Split(f, a[0], 3) }),
	"random_fold_in": op1("random.FoldIn(f, key, data)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return random.FoldIn(f, a[0], a[1])
	}),
	"random_split_then_normal": {call: "random.Normal(f, second key of random.Split(f, key, 2), dtypes.Float32, 5)", tol: 1e-6,
		build: func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
			k := f.Reshape(f.Slice(random.Split(f, a[0], 2), []int{1, 0}, []int{2, 2}, nil), 2)
			return []stablehlo.Value{random.Normal(f, k, dtypes.Float32, 5)}
		}},
}

func scatterRows(r stablehlo.Reduction, unique bool) opsBuilder {
	call := fmt.Sprintf("f.Scatter(x, idx, u, ScatterParams{Dims: rows, Combine: %v})", r)
	if r == 0 {
		call = "f.Scatter(x, idx, u, ScatterParams{Dims: rows, UniqueIndices: true}) (Combine 0: replace)"
	}
	return op1(call, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Scatter(a[0], f.Reshape(a[1], 3, 1), a[2], stablehlo.ScatterParams{Dims: rows, Combine: r, UniqueIndices: unique})
	})
}

// convCase is lax.conv_general_dilated with dimension numbers given as layout strings.
func convCase(lhs, rhs, out string, p stablehlo.ConvParams) opsBuilder {
	return op1(fmt.Sprintf("f.Conv(x, w, ConvParams{Dims: ConvLayout(%q, %q, %q), Strides: %v, Padding: %v, LhsDilation: %v, RhsDilation: %v, FeatureGroupCount: %d, BatchGroupCount: %d})",
		lhs, rhs, out, p.Strides, p.Padding, p.LhsDilation, p.RhsDilation, p.FeatureGroupCount, p.BatchGroupCount),
		func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			d, err := stablehlo.ConvLayout(lhs, rhs, out)
			if err != nil {
				f.Fail("convolution", -1, stablehlo.Value{}, err)
				return stablehlo.Value{}
			}
			p.Dims = d
			return f.Conv(a[0], a[1], p)
		})
}

func windowCase(r stablehlo.Reduction, p stablehlo.ReduceWindowParams) opsBuilder {
	return op1(fmt.Sprintf("f.ReduceWindow(x, %v, {Window: %v, Strides: %v, Padding: %v, BaseDilations: %v, WindowDilations: %v})",
		r, p.Window, p.Strides, p.Padding, p.BaseDilations, p.WindowDilations),
		func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.ReduceWindow(a[0], r, p) })
}

func unCase(call string, op func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value, tol float64) opsBuilder {
	b := op1(call, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return op(f, a[0]) })
	b.tol = tol
	return b
}

func binCase(call string, op func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value, tol float64) opsBuilder {
	b := op1(call, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return op(f, a[0], a[1]) })
	b.tol = tol
	return b
}

func bitcastCase(d dtypes.DType) opsBuilder {
	return op1(fmt.Sprintf("f.BitcastConvert(x, dtypes.%v)", d), func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.BitcastConvert(a[0], d)
	})
}

// rngCase is lax.rng_bit_generator on JAX's u32[4] key, bitcast to the u64[2] state and
// back as JAX does.
func rngCase(alg stablehlo.RngAlgorithm, d dtypes.DType, dims ...int) opsBuilder {
	return opsBuilder{call: fmt.Sprintf("f.RngBitGenerator(key as u64[2], %v, u%d%v)", alg, d.Bits(), dims),
		build: func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
			state := f.BitcastConvert(f.Reshape(a[0], 2, 2), dtypes.Uint64)
			next, bits := f.RngBitGenerator(state, alg, stablehlo.NewShape(d, dims...))
			return []stablehlo.Value{f.Reshape(f.BitcastConvert(next, dtypes.Uint32), 4), bits}
		}}
}

func randomBitsCase(d dtypes.DType, dims ...int) opsBuilder {
	return op1(fmt.Sprintf("random.Bits(f, key, dtypes.%v, %v)", d, dims), func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return random.Bits(f, a[0], d, dims...)
	})
}
