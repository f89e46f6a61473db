package jit_test

import (
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/tree"
)

// The trees of TestTreeFunction: one generic type per tree, for arrays, values and specs.
type tLayer[T any] struct{ W, B T }

type tParams[T any] struct {
	Layers []tLayer[T]
	Scale  map[string]T
}

type tBatch[T any] struct{ X, Y T }

// tLoss is sum((s * ((x W0 + b0) W1 + b1) - y)^2), with NumPy broadcasting of the biases.
func tLoss(f *lower.Function, p tParams[lower.Value], d tBatch[lower.Value]) lower.Value {
	h := d.X
	for _, l := range p.Layers {
		h = f.Add(f.MatMul(h, l.W), l.B)
	}
	r := f.Sub(f.Mul(h, p.Scale["s"]), d.Y)
	return f.Sum(f.Mul(r, r))
}

// tStep is one SGD step of rate 1/8 on tLoss, its parameters a tree: it returns the loss and
// the new parameters.
func tStep(f *lower.Function, p tParams[lower.Value], data tBatch[lower.Value]) (lower.Value, tParams[lower.Value]) {
	loss, g := autodiff.ValueAndGradTree(f.Function, tLoss(f, p, data), p)
	next := tParams[lower.Value]{Scale: map[string]lower.Value{}}
	for i, l := range p.Layers {
		gl := g.Layers[i]
		next.Layers = append(next.Layers, tLayer[lower.Value]{W: f.Sub(l.W, f.Mul(gl.W, f.Constant(0.125))), B: f.Sub(l.B, f.Mul(gl.B, f.Constant(0.125)))})
	}
	next.Scale["s"] = f.Sub(p.Scale["s"], f.Mul(g.Scale["s"], f.Constant(0.125)))
	return loss, next
}

// tHost are the starting values: x [4,2], W0 [2,4], b0 [4], W1 [4,2], b1 [2], s, y [4,2].
var tHost = struct{ x, w0, b0, w1, b1, s, y []float64 }{
	x:  []float64{1, 0, 0.5, -1, 0, 2, -0.5, 0.5},
	w0: []float64{0.5, -0.25, 0, 1, 0.25, 0.5, -0.5, 0},
	b0: []float64{0, 0.25, -0.25, 0.5},
	w1: []float64{1, 0, -0.5, 0.25, 0, 0.5, 0.25, -1},
	b1: []float64{0.125, -0.125},
	s:  []float64{2},
	y:  []float64{1, -1, 0, 0.5, -0.5, 1, 2, 0},
}

// tReference computes the loss and the gradients of tLoss in float64: the values are dyadic
// and small, so float32 arithmetic in any order gives the same bits.
func tReference() (loss float64, gw0, gb0, gw1, gb1 []float64, gs float64) {
	v := tHost
	mm := func(a, b []float64, n, k, m int) []float64 {
		out := make([]float64, n*m)
		for i := range n {
			for j := range m {
				for l := range k {
					out[i*m+j] += a[i*k+l] * b[l*m+j]
				}
			}
		}
		return out
	}
	h1 := mm(v.x, v.w0, 4, 2, 4)
	for i := range h1 {
		h1[i] += v.b0[i%4]
	}
	h2 := mm(h1, v.w1, 4, 4, 2)
	for i := range h2 {
		h2[i] += v.b1[i%2]
	}
	dh2 := make([]float64, 8) // dloss/dh2 = 2 r s
	for i := range h2 {
		r := h2[i]*v.s[0] - v.y[i]
		loss += r * r
		gs += 2 * r * h2[i]
		dh2[i] = 2 * r * v.s[0]
	}
	tr := func(a []float64, n, m int) []float64 {
		out := make([]float64, n*m)
		for i := range n {
			for j := range m {
				out[j*n+i] = a[i*m+j]
			}
		}
		return out
	}
	gw1 = mm(tr(h1, 4, 4), dh2, 4, 4, 2)
	gb1 = make([]float64, 2)
	for i, d := range dh2 {
		gb1[i%2] += d
	}
	dh1 := mm(dh2, tr(v.w1, 4, 2), 4, 2, 4)
	gw0 = mm(tr(v.x, 4, 2), dh1, 2, 4, 4)
	gb0 = make([]float64, 4)
	for i, d := range dh1 {
		gb0[i%4] += d
	}
	return loss, gw0, gb0, gw1, gb1, gs
}

func f32(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

func sgd(p, g []float64) []float32 {
	out := make([]float32, len(p))
	for i := range p {
		out[i] = float32(p[i] - g[i]/8)
	}
	return out
}

// TestTreeFunction trains one step of a two-layer model whose parameters, batch and results
// are trees, on a 2x4 mesh (as fitShape makes it on fewer devices): the layout comes from trees
// of specs (one spec for the whole batch), the parameters are donated, the gradients come back
// as a tree, and the loss and new parameters are exact. A second call with the step's own result
// as its parameters reuses the compiled function.
func TestTreeFunction(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{2, 4}, "data", "model")
	pSpecs := tParams[mesh.PartitionSpec]{
		Layers: []tLayer[mesh.PartitionSpec]{{W: mesh.P(nil, "model"), B: mesh.P("model")}, {W: mesh.P("model", nil), B: mesh.P()}},
		Scale:  map[string]mesh.PartitionSpec{"s": mesh.P()},
	}
	step := jit.NewTree("tree_step", tStep, jit.InTree(pSpecs, mesh.P("data")), jit.OutTree(mesh.P(), pSpecs), jit.Donate(0))
	defer step.Close()

	put := func(v []float64, dims []int, spec mesh.PartitionSpec) *jit.Array {
		a, err := jit.Put(c, f32(v), dims, sharding(t, m, spec))
		require.NoError(t, err)
		return a
	}
	v := tHost
	params := tParams[*jit.Array]{
		Layers: []tLayer[*jit.Array]{
			{W: put(v.w0, []int{2, 4}, pSpecs.Layers[0].W), B: put(v.b0, []int{4}, pSpecs.Layers[0].B)},
			{W: put(v.w1, []int{4, 2}, pSpecs.Layers[1].W), B: put(v.b1, []int{2}, pSpecs.Layers[1].B)},
		},
		Scale: map[string]*jit.Array{"s": put(v.s, nil, mesh.P())},
	}
	data := tBatch[*jit.Array]{X: put(v.x, []int{4, 2}, mesh.P("data")), Y: put(v.y, []int{4, 2}, mesh.P("data"))}
	defer func() { require.NoError(t, jit.CloseTree(data)) }()

	var loss1 *jit.Array
	var next tParams[*jit.Array]
	require.NoError(t, step.Call(c, []any{params, data}, &loss1, &next))
	defer func() { require.NoError(t, jit.CloseTree([]any{loss1, next})) }()
	for _, a := range []*jit.Array{params.Layers[0].W, params.Layers[1].B, params.Scale["s"]} {
		assert.True(t, a.IsClosed(), "a donated parameter is closed")
	}
	assert.False(t, data.X.IsClosed())

	loss, gw0, gb0, gw1, gb1, gs := tReference()
	got, err := jit.Item[float32](loss1)
	require.NoError(t, err)
	assert.Equal(t, float32(loss), got)
	for _, c := range []struct {
		a    *jit.Array
		want []float32
		spec mesh.PartitionSpec
	}{
		{next.Layers[0].W, sgd(v.w0, gw0), pSpecs.Layers[0].W},
		{next.Layers[0].B, sgd(v.b0, gb0), pSpecs.Layers[0].B},
		{next.Layers[1].W, sgd(v.w1, gw1), pSpecs.Layers[1].W},
		{next.Layers[1].B, sgd(v.b1, gb1), pSpecs.Layers[1].B},
		{next.Scale["s"], sgd(v.s, []float64{gs}), mesh.P()},
	} {
		host, err := jit.ToHostAs[float32](c.a)
		require.NoError(t, err)
		assert.Equal(t, c.want, host)
		assert.Equal(t, c.spec, c.a.Sharding().Spec())
	}

	// The result's parameters are the next call's: same structure, same Function.
	var loss2 *jit.Array
	var again tParams[*jit.Array]
	require.NoError(t, step.Call(c, []any{next, data}, &loss2, &again))
	defer func() { require.NoError(t, jit.CloseTree([]any{loss2, again})) }()
	second, err := jit.Item[float32](loss2)
	require.NoError(t, err)
	assert.NotEqual(t, got, second)
	assert.True(t, next.Layers[0].W.IsClosed())
}

// TestTreeFunctionErrors: every mistake with trees is an error naming the path, and leaves
// no buffer behind.
func TestTreeFunctionErrors(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{2}, "x") // 2 devices, 1 on a host with one
	put := func(v ...float32) *jit.Array {
		a, err := jit.Put(c, v, []int{len(v)}, sharding(t, m, mesh.P()))
		require.NoError(t, err)
		return a
	}
	x, y := put(1, 2), put(3, 4)
	defer x.Close()
	defer y.Close()
	type pair[T any] struct{ A, B T }
	add := func(f *lower.Function, in pair[lower.Value]) lower.Value { return f.Add(in.A, in.B) }

	// A working call, then the mistakes.
	ok := jit.NewTree("tree_add", add)
	defer ok.Close()
	var out *jit.Array
	require.NoError(t, ok.Call(c, []any{pair[*jit.Array]{x, y}}, &out))
	sum, err := jit.ToHostAs[float32](out)
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 6}, sum)
	require.NoError(t, out.Close())

	cases := []struct {
		name string
		call func() error
		is   []error
		msg  string
	}{
		{"nil leaf", func() error { return ok.Call(c, []any{pair[*jit.Array]{x, nil}}, &out) }, []error{jit.ErrNil},
			"jit: tree_add: nil value: argument [0].B is a nil *Array"},
		{"not a tree", func() error {
			return ok.Call(c, []any{struct {
				A *jit.Array
				N int
			}{x, 1}}, &out)
		}, []error{jit.ErrArguments, tree.ErrNotTree}, "tree: [0].N: a int is neither a leaf (*jit.Array) nor a container"},
		{"argument count", func() error { return ok.Call(c, []any{x, y}, &out) }, []error{jit.ErrArguments},
			"jit: tree_add: arguments do not match: 2 arguments for a body of 1"},
		{"result count", func() error { return ok.Call(c, []any{pair[*jit.Array]{x, y}}) }, []error{jit.ErrArguments},
			"0 places for the body's 1 results"},
		{"out not a pointer", func() error { return ok.Call(c, []any{pair[*jit.Array]{x, y}}, pair[*jit.Array]{}) }, []error{jit.ErrArguments},
			"result 0 goes into the tree a non-nil pointer points to, not jit_test.pair"},
		{"out of the wrong type", func() error { return ok.Call(c, []any{pair[*jit.Array]{x, y}}, out) }, []error{jit.ErrArguments, tree.ErrStructure},
			"result 0: tree: the root: a leaf (*jit.Array) where the type has a jit.Array"},
		{"out of another shape", func() error { var p pair[*jit.Array]; return ok.Call(c, []any{pair[*jit.Array]{x, y}}, &p) },
			[]error{jit.ErrArguments, tree.ErrStructure}, "result 0: tree: the root: a leaf (*jit.Array) where the type has a jit_test.pair"},
		{"body of another shape", func() error { return ok.Call(c, []any{[]*jit.Array{x, y}}, &out) }, []error{jit.ErrLowering, tree.ErrStructure},
			"argument 0: tree: the root: a jit_test.pair[github.com/xlamesh/xlamesh/stablehlo.Value] where the tree has a list of 2"},
		{"body not a func", func() error { return jit.NewTree("tree_bad", 3).Call(c, nil) }, []error{jit.ErrArguments},
			"the body is a int, not a func(*lower.Function, ...)"},
		{"body without a function", func() error { return jit.NewTree("tree_bad", func(x lower.Value) {}).Call(c, []any{x}) }, []error{jit.ErrArguments},
			"its first argument must be a *lower.Function"},
		{"donate typo", func() error {
			f := jit.NewTree("tree_add", add, jit.DonatePaths("[0].C"))
			defer f.Close()
			return f.Call(c, []any{pair[*jit.Array]{x, y}}, &out)
		}, []error{jit.ErrArguments}, "donation: [0].C names no leaf of the arguments"},
		{"in tree mismatch", func() error {
			f := jit.NewTree("tree_add", add, jit.InTree(struct{ A mesh.PartitionSpec }{mesh.P()}))
			defer f.Close()
			return f.Call(c, []any{pair[*jit.Array]{x, y}}, &out)
		}, []error{jit.ErrArguments, tree.ErrStructure}, "tree: [0]: the prefix has a struct {A} where the tree has a struct {A, B}"},
		{"in tree count", func() error {
			f := jit.NewTree("tree_add", add, jit.InTree(mesh.P(), mesh.P()))
			defer f.Close()
			return f.Call(c, []any{pair[*jit.Array]{x, y}}, &out)
		}, []error{jit.ErrArguments}, "2 trees of specs for 1 arguments"},
		{"out tree mismatch", func() error {
			f := jit.NewTree("tree_add", add, jit.OutTree(pair[mesh.PartitionSpec]{mesh.P(), mesh.P()}))
			defer f.Close()
			return f.Call(c, []any{pair[*jit.Array]{x, y}}, &out)
		}, []error{jit.ErrArguments, tree.ErrStructure}, "OutTree: tree: [0]: the prefix has a struct {A, B} where the tree has a leaf"},
		{"tree options to New", func() error {
			f := jit.New("flat", double, jit.DonatePaths("[0]"))
			defer f.Close()
			_, err := f.Call(c, x)
			return err
		}, []error{jit.ErrArguments}, "InTree, OutTree and DonatePaths are options of NewTree"},
		{"unset result", func() error {
			f := jit.NewTree("tree_unset", func(f *lower.Function, in pair[lower.Value]) pair[lower.Value] {
				return pair[lower.Value]{A: in.A}
			})
			defer f.Close()
			var p pair[*jit.Array]
			return f.Call(c, []any{pair[*jit.Array]{x, y}}, &p)
		}, []error{jit.ErrLowering}, "result [0].B holds no value"},
		{"grad of an int", func() error {
			f := jit.NewTree("tree_grad", func(f *lower.Function, in pair[lower.Value]) lower.Value {
				p := pair[lower.Value]{A: in.A, B: f.Convert(in.B, dtypes.Int32)}
				return autodiff.GradTree(f.Function, f.Sum(in.A), p).A
			})
			defer f.Close()
			return f.Call(c, []any{pair[*jit.Array]{x, y}}, &out)
		}, []error{autodiff.ErrNotFloat}, "but .B is"},
		{"closed", func() error {
			f := jit.NewTree("tree_add", add)
			require.NoError(t, f.Close())
			return f.Call(c, []any{pair[*jit.Array]{x, y}}, &out)
		}, []error{jit.ErrClosed}, "jit: tree_add: "},
		{"nil function", func() error { var f *jit.TreeFunction; return f.Call(c, nil, &out) },
			[]error{jit.ErrNil}, "nil *TreeFunction"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.Error(t, err)
			for _, want := range tc.is {
				assert.ErrorIs(t, err, want)
			}
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	assert.False(t, x.IsClosed())
}

// TestTreeSpecsAndDonate: InSpecs and OutSpecs give one spec per argument or result, for the
// whole tree; Donate donates whole arguments; a body of several arguments and results, of no
// arguments, and of one leaf.
func TestTreeSpecsAndDonate(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{2}, "x") // 2 devices, 1 on a host with one
	f := jit.NewTree("tree_specs", func(f *lower.Function, xs []lower.Value, s lower.Value) ([]lower.Value, lower.Value) {
		return []lower.Value{f.Mul(xs[0], s), f.Mul(xs[1], s)}, f.Add(xs[0], xs[1])
	}, jit.InSpecs(mesh.P("x"), mesh.P()), jit.OutSpecs(mesh.P(), mesh.P("x")), jit.Donate(0))
	defer f.Close()
	a, err := jit.Put(c, []float32{1, 2}, []int{2}, sharding(t, m, mesh.P("x")))
	require.NoError(t, err)
	b, err := jit.Put(c, []float32{3, 4}, []int{2}, sharding(t, m, mesh.P("x")))
	require.NoError(t, err)
	s, err := jit.Put(c, []float32{2}, nil, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	defer s.Close()
	var scaled []*jit.Array
	var sum *jit.Array
	require.NoError(t, f.Call(c, []any{[]*jit.Array{a, b}, s}, &scaled, &sum))
	defer func() { require.NoError(t, jit.CloseTree([]any{scaled, sum})) }()
	assert.True(t, a.IsClosed() && b.IsClosed(), "argument 0 donated")
	assert.False(t, s.IsClosed())
	got, err := jit.ToHostAs[float32](scaled[1])
	require.NoError(t, err)
	assert.Equal(t, []float32{6, 8}, got)
	assert.Equal(t, mesh.P(), scaled[1].Sharding().Spec())
	assert.Equal(t, mesh.P("x"), sum.Sharding().Spec())

	none := jit.NewTree("tree_none", func(f *lower.Function) lower.Value { return f.Iota(lower.NewShape(dtypes.Int32, 3), 0) })
	defer none.Close()
	var iota *jit.Array
	require.NoError(t, none.Call(c, nil, &iota))
	defer iota.Close()
	ints, err := jit.ToHostAs[int32](iota)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1, 2}, ints)
}

// TestTreeLower lowers a tree function for trees of argument types (each with its spec, as
// Function.Lower takes them), without a client.
func TestTreeLower(t *testing.T) {
	type pair[T any] struct{ A, B T }
	f := jit.NewTree("tree_lower", func(f *lower.Function, in pair[lower.Value]) lower.Value { return f.Mul(in.A, in.B) })
	defer f.Close()
	am, err := mesh.NewAbstract([]int{2}, []string{"x"})
	require.NoError(t, err)
	s := lower.NewShape(dtypes.Float32, 4)
	prog, err := f.Lower(am, pair[jit.ArgType]{jit.ArgType{Shape: s, Spec: mesh.P("x")}, jit.ArgType{Shape: s, Spec: mesh.P()}})
	require.NoError(t, err)
	assert.Contains(t, prog.Text(), `%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}`)
	assert.Contains(t, prog.Text(), `%arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}`)
}

// TestTreeConcurrent calls one TreeFunction from several goroutines, with two argument
// structures (a slice of two and of three), under -race.
func TestTreeConcurrent(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{2}, "x") // 2 devices, 1 on a host with one
	sum := jit.NewTree("tree_sum", func(f *lower.Function, in []lower.Value) lower.Value {
		out := in[0]
		for _, v := range in[1:] {
			out = f.Add(out, v)
		}
		return out
	})
	defer sum.Close()
	var xs []*jit.Array
	for i := range 3 {
		a, err := jit.Put(c, []float32{float32(i), 1}, []int{2}, sharding(t, m, mesh.P("x")))
		require.NoError(t, err)
		defer a.Close()
		xs = append(xs, a)
	}
	done := make(chan error)
	for g := range 6 {
		go func() {
			n := 2 + g%2
			var out *jit.Array
			if err := sum.Call(c, []any{xs[:n]}, &out); err != nil {
				done <- err
				return
			}
			got, err := jit.ToHostAs[float32](out)
			if err == nil && (got[0] != float32(n*(n-1)/2) || got[1] != float32(n)) {
				err = fmt.Errorf("sum of %d: got %v", n, got)
			}
			out.Close() // before the test can end and count the buffers
			done <- err
		}()
	}
	for range 6 {
		assert.NoError(t, <-done)
	}
}
