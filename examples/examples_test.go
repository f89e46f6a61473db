package examples_test

import (
	"fmt"
	"math"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// open returns a client with the devices of the test host, and its devices as mesh.Devices:
// $XLAMESH_TEST_DEVICES CPU devices (8 when it is unset) of the default plugin or of
// $XLAMESH_PJRT_PLUGIN, or every GPU under XLAMESH_TEST_PLATFORM=gpu. The examples that use it
// print the same on any number of devices.
func open() (*pjrt.Client, []mesh.Device) {
	n := 1 // on a GPU host, Open returns every GPU there is
	if p, err := pjrttest.Platform(); err != nil {
		panic(err)
	} else if p == "cpu" {
		n = must(pjrttest.Devices())
	}
	return openN(n)
}

// openN returns a client with at least n devices (exactly n CPU devices), for the examples
// that show a mesh of n devices.
func openN(n int) (*pjrt.Client, []mesh.Device) {
	c, err := pjrttest.Open(n)
	if err != nil {
		panic(err)
	}
	return c, jit.Devices(c)
}

// fitMesh returns the mesh of shape pjrttest.FitShape(want, len(devices)) over the first devices.
func fitMesh(devices []mesh.Device, want []int, names ...string) mesh.Mesh {
	shape := pjrttest.FitShape(want, len(devices))
	return must(mesh.New(devices[:pjrttest.MeshSize(shape)], shape, names...))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// mlpStep is one SGD step of a 2-layer ReLU MLP with mean squared error, gradients written out:
// h = relu(x W1); p = h W2; loss = mean((p - y)^2); W -= lr * dW.
func mlpStep(f *lower.Function, a []lower.Value) []lower.Value {
	x, y, w1, w2 := a[0], a[1], a[2], a[3]
	n := float64(x.Shape().Dim(0))
	h := f.Max(f.MatMul(x, w1), f.Constant(0.0))
	p := f.MatMul(h, w2)
	d := f.Sub(p, y)
	loss := f.Div(f.Sum(f.Mul(d, d)), f.Constant(n))
	dp := f.Mul(d, f.Constant(2/n))
	dw2 := f.MatMul(f.Transpose(h, 1, 0), dp)
	dh := f.Select(f.Greater(h, f.Constant(0.0)), f.MatMul(dp, f.Transpose(w2, 1, 0)), f.Full(h.Shape(), 0.0))
	dw1 := f.MatMul(f.Transpose(x, 1, 0), dh)
	lr := f.Constant(0.125)
	return []lower.Value{loss, f.Sub(w1, f.Mul(lr, dw1)), f.Sub(w2, f.Mul(lr, dw2))}
}

// Data parallelism: the batch is split over the devices of mesh "data" (8 of them on the
// default 8 CPU devices, fewer on a smaller host), the weights are replicated, and XLA inserts
// the gradient all-reduce. The loss and the new weights equal those of the same step on a
// single device.
func Example_dataParallelMLP() {
	c, devices := open()
	defer c.Close()
	x, y := make([]float32, 16*4), make([]float32, 16)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	for i := range y {
		y[i] = float32(i % 3)
	}
	w1 := []float32{0.5, -0.25, 0.25, 0.5, 0.125, -0.5, -0.5, 0.25, 0.75, 0.25, -0.125, 0.5}
	w2 := []float32{0.5, -0.25, 0.75}

	step := func(m mesh.Mesh, batch mesh.PartitionSpec) []float32 {
		put := func(flat []float32, shape []int, spec mesh.PartitionSpec) *jit.Array {
			return must(jit.Put(c, flat, shape, must(mesh.NewNamedSharding(m, spec))))
		}
		args := []*jit.Array{put(x, []int{16, 4}, batch), put(y, []int{16, 1}, batch),
			put(w1, []int{4, 3}, mesh.P()), put(w2, []int{3, 1}, mesh.P())}
		fn := jit.New("mlp_step", mlpStep, jit.OutSpecs(mesh.P(), mesh.P(), mesh.P()))
		outs := must(fn.Call(c, args...))
		var lossAndWeights []float32
		for _, a := range outs {
			lossAndWeights = append(lossAndWeights, must(a.ToHost()).([]float32)...)
			a.Close()
		}
		for _, a := range args {
			a.Close()
		}
		return lossAndWeights
	}
	sharded := step(fitMesh(devices, []int{8}, "data"), mesh.P("data"))
	single := step(must(mesh.New(devices[:1], []int{1}, "data")), mesh.P())
	maxDiff := 0.0
	for i := range sharded {
		maxDiff = math.Max(maxDiff, math.Abs(float64(sharded[i]-single[i])))
	}
	fmt.Printf("loss %.4f (single device %.4f), max difference over loss and weights %.0e\n", sharded[0], single[0], maxDiff)
	// Output:
	// loss 1.6738 (single device 1.6738), max difference over loss and weights 0e+00
}

// Model parallelism on a 2x4 mesh: rows of A split over "x", columns of B over "y", so the
// product is split over both, C = A B with P("x", None) x P(None, "y") -> P("x", "y").
// It shows the block of one of the 8 devices, so it needs a host with 8.
func Example_modelParallelMatMul() {
	c, devices := openN(8)
	defer c.Close()
	m := must(mesh.New(devices[:8], []int{2, 4}, "x", "y"))
	a, b := make([]int32, 4*6), make([]int32, 6*8)
	for i := range a {
		a[i] = int32(i % 5)
	}
	for i := range b {
		b[i] = int32(i%3 - 1)
	}
	A := must(jit.Put(c, a, []int{4, 6}, must(mesh.NewNamedSharding(m, mesh.P("x", nil)))))
	B := must(jit.Put(c, b, []int{6, 8}, must(mesh.NewNamedSharding(m, mesh.P(nil, "y")))))
	defer A.Close()
	defer B.Close()
	matmul := jit.New("matmul", func(f *lower.Function, v []lower.Value) []lower.Value {
		return []lower.Value{f.MatMul(v[0], v[1])}
	}, jit.InSpecs(mesh.P("x", nil), mesh.P(nil, "y")), jit.OutSpecs(mesh.P("x", "y")))
	C := must(matmul.Call(c, A, B))[0]
	defer C.Close()
	got := must(C.ToHost()).([]int32)
	ok := true
	for i := 0; i < 4; i++ {
		for j := 0; j < 8; j++ {
			var want int32
			for k := 0; k < 6; k++ {
				want += a[i*6+k] * b[k*8+j]
			}
			ok = ok && got[i*8+j] == want
		}
	}
	sh := C.AddressableShards()
	fmt.Println(C.Sharding().Spec(), "equal to the unsharded product:", ok)
	fmt.Println("device", sh[5].Device.ID(), "holds", sh[5].Index, must(sh[5].Data.ToHost()))
	// Output:
	// P('x', 'y') equal to the unsharded product: true
	// device 5 holds [2:4, 2:4] [-4 2 1 2]
}

// shard_map: each device sums its own block of x, then an all-reduce over "x" adds the partial
// sums, so every device ends with the total (JAX: shard_map(lambda b: psum(b.sum(), 'x'), ...)).
// It needs a host with 8 devices: on one, the shard_map does not compile (XLA finds no
// implementation of Shardy's xla.sdy.GlobalToLocalShape custom call for 1 partition).
func Example_shardMapAllReduce() {
	c, devices := openN(8)
	defer c.Close()
	m := must(mesh.New(devices[:8], []int{4, 2}, "x", "y"))
	x := make([]int32, 8*4)
	for i := range x {
		x[i] = int32(i)
	}
	X := must(jit.Put(c, x, []int{8, 4}, must(mesh.NewNamedSharding(m, mesh.P("x", nil)))))
	defer X.Close()
	total := jit.New("psum", func(f *lower.Function, v []lower.Value) []lower.Value {
		return f.ShardMap(m.Abstract(), []mesh.PartitionSpec{mesh.P("x", nil)}, []mesh.PartitionSpec{mesh.P()}, []string{"x"},
			func(g *lower.Function, local []lower.Value) []lower.Value {
				partial := g.Sum(local[0]) // this device's 2x4 block
				return []lower.Value{g.Psum(partial, "x")}
			}, v[0])
	}, jit.OutSpecs(mesh.P()))
	out := must(total.Call(c, X))[0]
	defer out.Close()
	fmt.Println("sum of arange(32):", must(out.ToHost()), "fully replicated:", out.IsFullyReplicated())
	// Output:
	// sum of arange(32): [496] fully replicated: true
}

// The compile cache keys lowering on the abstract mesh: one function called on two 2x2 meshes
// of different devices lowers once and compiles twice; calling again is a hit on both caches.
// Its two meshes of 4 devices need a host with 8.
func Example_abstractMeshCache() {
	c, devices := openN(8)
	defer c.Close()
	double := jit.New("double", func(f *lower.Function, v []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(v[0], f.Constant(2))}
	}, jit.OutSpecs(mesh.P("a", "b")))
	call := func(ds []mesh.Device) []float32 {
		m := must(mesh.New(ds, []int{2, 2}, "a", "b"))
		x := must(jit.Put(c, []float32{1, 2, 3, 4}, []int{2, 2}, must(mesh.NewNamedSharding(m, mesh.P("a", "b")))))
		defer x.Close()
		y := must(double.Call(c, x))[0]
		defer y.Close()
		return must(y.ToHost()).([]float32)
	}
	fmt.Println(call(devices[:4]), call(devices[4:]))
	fmt.Printf("%+v\n", double.Stats())
	call(devices[:4])
	fmt.Printf("%+v\n", double.Stats())
	// Output:
	// [2 4 6 8] [2 4 6 8]
	// {LoweringHits:1 LoweringMisses:1 CompileHits:0 CompileMisses:2}
	// {LoweringHits:2 LoweringMisses:1 CompileHits:1 CompileMisses:2}
}
