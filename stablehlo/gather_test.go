package stablehlo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// opCase builds one op from arguments of the given shapes; want is the result shape, or
// err a phrase of the expected error (which wraps sentinel and names op).
type opCase struct {
	name     string
	args     []stablehlo.Shape
	build    func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value
	want     stablehlo.Shape
	sentinel error
	err      string
}

func runOpCases(t *testing.T, op string, cases []opCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			var args []stablehlo.Value
			for _, s := range tc.args {
				args = append(args, f.Arg(s))
			}
			r := tc.build(f, args)
			f.Return(r)
			text, err := m.Build()
			if tc.err == "" {
				require.NoError(t, err)
				require.True(t, tc.want.Equal(r.Shape()), "got %v, want %v", r.Shape(), tc.want)
				require.Contains(t, text, "stablehlo."+op)
				return
			}
			require.ErrorIs(t, err, tc.sentinel)
			require.ErrorContains(t, err, tc.err)
			var oe *stablehlo.OpError
			require.True(t, errors.As(err, &oe))
			require.Equal(t, op, oe.Op)
			require.False(t, r.Valid())
		})
	}
}

func shp(d stablehlo.DType, dims ...int) stablehlo.Shape { return stablehlo.NewShape(d, dims...) }

// The spec's gather example: batching dims, a two-component index vector, offset dims last.
var specGather = stablehlo.GatherParams{
	Dims: stablehlo.GatherDims{OffsetDims: []int{3, 4}, CollapsedSliceDims: []int{1}, OperandBatchingDims: []int{0},
		StartIndicesBatchingDims: []int{1}, StartIndexMap: []int{2, 1}, IndexVectorDim: 3},
	SliceSizes: []int{1, 1, 2, 2},
}

var specScatter = stablehlo.ScatterParams{
	Dims: stablehlo.ScatterDims{UpdateWindowDims: []int{3, 4}, InsertedWindowDims: []int{1}, InputBatchingDims: []int{0},
		ScatterIndicesBatchingDims: []int{1}, ScatterDimsToOperandDims: []int{2, 1}, IndexVectorDim: 3},
	Combine: stablehlo.Sum,
}

func TestGatherShapes(t *testing.T) {
	i64, f32, i32 := dtypes.Int64, dtypes.Float32, dtypes.Int32
	take := func(axis int) func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Take(a[0], a[1], axis) }
	}
	gather := func(p stablehlo.GatherParams) func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Gather(a[0], a[1], p) }
	}
	mod := func(edit func(p *stablehlo.GatherParams)) stablehlo.GatherParams {
		p := specGather
		p.Dims.OffsetDims = append([]int(nil), p.Dims.OffsetDims...)
		p.SliceSizes = append([]int(nil), p.SliceSizes...)
		edit(&p)
		return p
	}
	runOpCases(t, "gather", []opCase{
		{name: "spec example", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)}, build: gather(specGather), want: shp(i32, 2, 2, 3, 2, 2)},
		{name: "take axis 0", args: []stablehlo.Shape{shp(f32, 5, 3), shp(i32, 2, 4)}, build: take(0), want: shp(f32, 2, 4, 3)},
		{name: "take axis 1", args: []stablehlo.Shape{shp(f32, 5, 3, 7), shp(dtypes.Uint8, 6)}, build: take(1), want: shp(f32, 5, 6, 7)},
		{name: "take scalar index", args: []stablehlo.Shape{shp(f32, 5, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Take(a[0], f.Constant(-1), 1)
		}, want: shp(f32, 5)},
		{name: "take axis out of range", args: []stablehlo.Shape{shp(f32, 5, 3), shp(i32, 2)}, build: take(2), sentinel: stablehlo.ErrShape, err: "Take: axis 2 out of range for tensor<5x3xf32>"},
		{name: "take float indices", args: []stablehlo.Shape{shp(f32, 5, 3), shp(f32, 2)}, build: take(0), sentinel: stablehlo.ErrDType, err: "operand 1 (%arg1): element type mismatch: Take: indices must be integers"},
		{name: "float start indices", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(f32, 2, 2, 3, 2)}, build: gather(specGather), sentinel: stablehlo.ErrDType, err: "start indices must be integers"},
		{name: "index_vector_dim", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.Dims.IndexVectorDim = 5 })), sentinel: stablehlo.ErrShape, err: "index_vector_dim 5 out of range [0, 4]"},
		{name: "slice sizes count", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.SliceSizes = []int{1, 1, 2} })), sentinel: stablehlo.ErrShape, err: "slice_sizes [1, 1, 2] needs one size per operand dimension (4)"},
		{name: "slice too big", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.SliceSizes[3] = 3 })), sentinel: stablehlo.ErrShape, err: "slice size 3 out of range for operand dimension 3 of size 2"},
		{name: "collapsed size", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.SliceSizes[1] = 2 })), sentinel: stablehlo.ErrShape, err: "operand dimension 1 is collapsed or batching but its slice size is 2"},
		{name: "offset dims unsorted", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.Dims.OffsetDims = []int{4, 3} })), sentinel: stablehlo.ErrShape, err: "offset_dims [4, 3] must be ascending"},
		{name: "offset dims out of range", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.Dims.OffsetDims = []int{3, 5} })), sentinel: stablehlo.ErrShape, err: "offset_dims [3, 5]: dimension 5 out of range [0, 5)"},
		{name: "rank count", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.Dims.OffsetDims = []int{3} })), sentinel: stablehlo.ErrShape, err: "have 3 entries, want the operand rank 4"},
		{name: "index map length", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 3)}, build: gather(specGather),
			sentinel: stablehlo.ErrShape, err: "start_index_map [2, 1] has 2 entries, want the index vector length 3"},
		{name: "index map hits batching", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.Dims.StartIndexMap = []int{2, 0} })), sentinel: stablehlo.ErrShape, err: "start_index_map [2, 0]: dimension 0 also appears in another list"},
		{name: "batching sizes", args: []stablehlo.Shape{shp(i32, 3, 3, 4, 2), shp(i64, 2, 2, 3, 2)}, build: gather(specGather),
			sentinel: stablehlo.ErrShape, err: "batching dimension sizes differ: operand dimension 0 is 3, start indices dimension 1 is 2"},
		{name: "batching on index vector", args: []stablehlo.Shape{shp(i32, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2)},
			build: gather(mod(func(p *stablehlo.GatherParams) { p.Dims.StartIndicesBatchingDims = []int{3} })), sentinel: stablehlo.ErrShape, err: "start_indices_batching_dims [3]: dimension 3 also appears in another list (or is index_vector_dim)"},
	})
}

func TestScatterShapes(t *testing.T) {
	i64, f32, i32 := dtypes.Int64, dtypes.Float32, dtypes.Int32
	scatter := func(p stablehlo.ScatterParams) func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Scatter(a[0], a[1], a[2], p)
		}
	}
	mod := func(edit func(p *stablehlo.ScatterParams)) stablehlo.ScatterParams {
		p := specScatter
		edit(&p)
		return p
	}
	in := []stablehlo.Shape{shp(i64, 2, 3, 4, 2), shp(i64, 2, 2, 3, 2), shp(i64, 2, 2, 3, 2, 2)}
	runOpCases(t, "scatter", []opCase{
		{name: "spec example", args: in, build: scatter(specScatter), want: shp(i64, 2, 3, 4, 2)},
		{name: "replace", args: in, build: scatter(mod(func(p *stablehlo.ScatterParams) { p.Combine = 0 })), want: shp(i64, 2, 3, 4, 2)},
		{name: "scatter add", args: []stablehlo.Shape{shp(f32, 5, 3), shp(i32, 2, 4), shp(f32, 2, 4, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ScatterAdd(a[0], a[1], a[2])
		}, want: shp(f32, 5, 3)},
		{name: "scatter add scalar update", args: []stablehlo.Shape{shp(f32, 5, 3), shp(i32, 2)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ScatterAdd(a[0], a[1], f.Constant(1))
		}, want: shp(f32, 5, 3)},
		{name: "scatter add update shape", args: []stablehlo.Shape{shp(f32, 5, 3), shp(i32, 2), shp(f32, 2, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ScatterAdd(a[0], a[1], a[2])
		}, sentinel: stablehlo.ErrShape, err: "updates dimension 1 (a window dimension) has size 4, larger than the operand's 3"},
		{name: "updates rank", args: []stablehlo.Shape{in[0], in[1], shp(i64, 2, 2, 3, 2)}, build: scatter(specScatter),
			sentinel: stablehlo.ErrShape, err: "updates have rank 4, want 5"},
		{name: "updates scatter size", args: []stablehlo.Shape{in[0], in[1], shp(i64, 2, 3, 3, 2, 2)}, build: scatter(specScatter),
			sentinel: stablehlo.ErrShape, err: "updates dimension 1 (a scatter dimension) has size 3, want the indices' 2"},
		{name: "updates type", args: []stablehlo.Shape{in[0], in[1], shp(i32, 2, 2, 3, 2, 2)}, build: scatter(specScatter),
			sentinel: stablehlo.ErrDType, err: "updates tensor<2x2x3x2x2xi32> differ in element type from operand tensor<2x3x4x2xi64>"},
		{name: "inserted repeated in batching", args: in, build: scatter(mod(func(p *stablehlo.ScatterParams) { p.Dims.InputBatchingDims = []int{1} })),
			sentinel: stablehlo.ErrShape, err: "input_batching_dims [1]: dimension 1 also appears in another list"},
		{name: "bad combiner", args: in, build: scatter(mod(func(p *stablehlo.ScatterParams) { p.Combine = 9 })),
			sentinel: stablehlo.ErrFunction, err: "invalid combiner Reduction(9)"},
		{name: "pred sum", args: []stablehlo.Shape{shp(dtypes.Bool, 4), shp(i32, 1), shp(dtypes.Bool, 1)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ScatterAdd(a[0], a[1], a[2])
		}, sentinel: stablehlo.ErrDType, err: "Sum of pred"},
		{name: "complex max", args: []stablehlo.Shape{shp(dtypes.Complex64, 4), shp(i32, 1, 1), shp(dtypes.Complex64, 1)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Scatter(a[0], a[1], a[2], stablehlo.ScatterParams{Combine: stablehlo.Max, Dims: stablehlo.ScatterDims{
				InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}})
		}, sentinel: stablehlo.ErrDType, err: "Max of complex<f32> (complex values have no order)"},
		{name: "func combiner", args: in, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ScatterFunc(a[0], a[1], a[2], mod(func(p *stablehlo.ScatterParams) { p.Combine = 0 }), func(g *stablehlo.Function, old, upd stablehlo.Value) stablehlo.Value {
				return g.Sub(old, upd)
			})
		}, want: shp(i64, 2, 3, 4, 2)},
		{name: "func combiner shape", args: in, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ScatterFunc(a[0], a[1], a[2], mod(func(p *stablehlo.ScatterParams) { p.Combine = 0 }), func(g *stablehlo.Function, old, upd stablehlo.Value) stablehlo.Value {
				return g.Convert(old, dtypes.Float32)
			})
		}, sentinel: stablehlo.ErrShape, err: "combiner returns tensor<f32>, want tensor<i64>"},
	})
}

// Params are complete and the text is what XLA parses (checked by running it below).
func TestGatherScatterText(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(shp(dtypes.Float32, 4, 3))
	i := f.Arg(shp(dtypes.Int32, 2))
	u := f.Arg(shp(dtypes.Float32, 2, 3))
	f.Return(f.Take(x, i, 0), f.ScatterAdd(x, i, u))
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, `"stablehlo.gather"(%arg0, %6) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>`)
	require.Contains(t, text, `<{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({`)
	var gp stablehlo.GatherParams
	var sp stablehlo.ScatterParams
	for _, o := range f.Ops() {
		switch p := o.Params().(type) {
		case stablehlo.GatherParams:
			gp = p
		case stablehlo.ScatterParams:
			sp = p
			require.Len(t, o.Regions(), 1)
			require.Equal(t, "stablehlo.add", o.Regions()[0].Ops()[0].Name())
		}
	}
	require.Equal(t, []int{1, 3}, gp.SliceSizes)
	require.Equal(t, stablehlo.Sum, sp.Combine)
	require.Equal(t, []int{0}, sp.Dims.InsertedWindowDims)
	require.True(t, strings.Count(text, "stablehlo.select") == 2)
}

// The spec's examples and JAX's indexing rules, run on the CPU plugin.
func TestGatherScatterRun(t *testing.T) {
	c := pjrttest.Client(t)
	build := func(body func(f *stablehlo.Function) []stablehlo.Value) program {
		m := stablehlo.NewModule("m")
		f := m.Main()
		f.Return(body(f)...)
		text, err := m.Build()
		require.NoError(t, err)
		var args []stablehlo.Shape
		for _, a := range f.Args() {
			args = append(args, a.Shape())
		}
		return program{text, args}
	}
	operand := make([]int64, 48)
	for k := range operand {
		operand[k] = int64(k + 1)
	}
	indices := []int64{0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9, 0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0}
	t.Run("spec", func(t *testing.T) {
		p := build(func(f *stablehlo.Function) []stablehlo.Value {
			x, i := f.Arg(shp(dtypes.Int64, 2, 3, 4, 2)), f.Arg(shp(dtypes.Int64, 2, 2, 3, 2))
			ones := f.Full(shp(dtypes.Int64, 2, 2, 3, 2, 2), 1)
			return []stablehlo.Value{f.Gather(x, i, specGather), f.Scatter(x, i, ones, specScatter)}
		})
		got := run1(t, c, p, operand, indices)
		require.Equal(t, []int64{1, 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16, 33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,
			1, 2, 3, 4, 13, 14, 15, 16, 21, 22, 23, 24, 43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30}, got[0])
		require.Equal(t, []int64{3, 4, 6, 7, 6, 7, 7, 8, 9, 10, 11, 12, 15, 16, 17, 18, 17, 18, 19, 20, 22, 23, 24, 25,
			25, 26, 28, 29, 30, 31, 31, 32, 35, 36, 38, 39, 38, 39, 39, 40, 41, 42, 44, 45, 46, 47, 47, 48}, got[1])
	})
	t.Run("jax indexing", func(t *testing.T) {
		p := build(func(f *stablehlo.Function) []stablehlo.Value {
			x, i := f.Arg(shp(dtypes.Float32, 4, 3)), f.Arg(shp(dtypes.Int8, 5))
			u := f.Arg(shp(dtypes.Float32, 5, 3))
			return []stablehlo.Value{f.Take(x, i, 0), f.Take(x, i, 1), f.ScatterAdd(x, i, u), f.ScatterAdd(x, i, f.Constant(1)),
				f.ScatterFunc(x, i, u, stablehlo.ScatterParams{Dims: stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0},
					ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}}, func(g *stablehlo.Function, old, upd stablehlo.Value) stablehlo.Value {
					return g.Max(old, upd)
				})}
		})
		x := seqF32(12)
		u := make([]float32, 15)
		for k := range u {
			u[k] = float32(100 + k)
		}
		got := run1(t, c, p, x, []int8{0, -1, 5, 2, -7}, u)
		// Take clamps 5 to 3 (axis 0) or 2 (axis 1) and -7 (-3 after adding 4, or -4 after
		// adding 3) to 0; ScatterAdd drops both.
		require.Equal(t, []float32{0, 1, 2, 9, 10, 11, 9, 10, 11, 6, 7, 8, 0, 1, 2}, got[0])
		require.Equal(t, []float32{0, 2, 2, 2, 0, 3, 5, 5, 5, 3, 6, 8, 8, 8, 6, 9, 11, 11, 11, 9}, got[1])
		require.Equal(t, []float32{100, 102, 104, 3, 4, 5, 115, 117, 119, 112, 114, 116}, got[2])
		require.Equal(t, []float32{1, 2, 3, 3, 4, 5, 7, 8, 9, 10, 11, 12}, got[3])
		// ScatterFunc takes the raw indices: -1, 5 and -7 are out of bounds, dropped.
		require.Equal(t, []float32{100, 101, 102, 3, 4, 5, 109, 110, 111, 9, 10, 11}, got[4])
	})
	// A narrow signed index on an axis longer than its type holds: -1 is the last element, so
	// n is added after widening (300 does not fit int8, 40000 not int16); in the index's own
	// type the sum would wrap.
	t.Run("narrow indices on long axes", func(t *testing.T) {
		p := build(func(f *stablehlo.Function) []stablehlo.Value {
			x8, i8 := f.Arg(shp(dtypes.Float32, 300)), f.Arg(shp(dtypes.Int8, 3))
			x16, i16 := f.Arg(shp(dtypes.Float32, 40000)), f.Arg(shp(dtypes.Int16, 3))
			return []stablehlo.Value{f.Take(x8, i8, 0), f.Take(x16, i16, 0)}
		})
		got := run1(t, c, p, seqF32(300), []int8{-1, -128, 127}, seqF32(40000), []int16{-1, -32768, 32767})
		require.Equal(t, []float32{299, 172, 127}, got[0])
		require.Equal(t, []float32{39999, 7232, 32767}, got[1])
	})
}
