package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// A kernel is a built-in function that bench sweeps and inspect compiles: its f32 inputs for a
// size n on d devices, its body, its cost, the ways to shard it over a 2-D mesh ("x", "y"), and
// a check of its result against the host.
type kernel struct {
	name     string
	defaultN int
	// shapes returns the input shapes and the output shape for size n on d devices.
	shapes func(n, d int) (ins [][]int, out []int)
	body   jit.Body
	// flops is the number of floating-point operations of one call.
	flops func(n, d int) float64
	// divisor is what n must be a multiple of on d devices for every strategy to split evenly.
	divisor func(d int) int
	// strategies are the shardings to try, written for a mesh with axes "x" and "y".
	strategies []strategy
	// check compares a few entries of the output with the host's float64 result.
	check func(out []float32, ins [][]float32, n, d int) error
}

// strategy is one choice of input and output partition specs.
type strategy struct {
	name string
	in   []mesh.PartitionSpec
	out  mesh.PartitionSpec
}

// String returns the specs as "P('x', None) P(None, 'y') -> P('x', 'y')".
func (s strategy) String() string {
	parts := make([]string, len(s.in))
	for i, p := range s.in {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ") + " -> " + s.out.String()
}

// xy is the tuple of both mesh axes: a dimension split over every device.
var xy = mesh.Axes("x", "y")

var kernels = []*kernel{matmulKernel, mlpKernel, attentionKernel}

// kernelNames lists the built-in kernels for messages.
func kernelNames() string {
	names := make([]string, len(kernels))
	for i, k := range kernels {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

func findKernel(name string) *kernel {
	for _, k := range kernels {
		if k.name == name {
			return k
		}
	}
	return nil
}

// describe returns e.g. "matmul f32[1024,1024] x f32[1024,1024] -> f32[1024,1024]".
func (k *kernel) describe(n, d int) string {
	ins, out := k.shapes(n, d)
	parts := make([]string, len(ins))
	for i, s := range ins {
		parts[i] = f32Type(s)
	}
	return fmt.Sprintf("%s %s -> %s", k.name, strings.Join(parts, " x "), f32Type(out))
}

func f32Type(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = fmt.Sprint(d)
	}
	return "f32[" + strings.Join(s, ",") + "]"
}

// inputs returns the kernel's host inputs: small values in [-0.5, 0.5) that repeat with
// periods that do not divide the dimensions, so that a misplaced block gives a wrong result.
func (k *kernel) inputs(n, d int) [][]float32 {
	ins, _ := k.shapes(n, d)
	out := make([][]float32, len(ins))
	for a, s := range ins {
		size := 1
		for _, x := range s {
			size *= x
		}
		v := make([]float32, size)
		p := []int{17, 13, 11}[a%3]
		for i := range v {
			v[i] = float32((i+a)%p)/float32(p) - 0.5
		}
		out[a] = v
	}
	return out
}

// argTypes returns jit.ArgTypes for the kernel's inputs under strategy s.
func (k *kernel) argTypes(n, d int, s strategy) []jit.ArgType {
	ins, _ := k.shapes(n, d)
	args := make([]jit.ArgType, len(ins))
	for i, dims := range ins {
		args[i] = jit.ArgType{Shape: lower.NewShape(dtypes.Float32, dims...), Spec: s.in[i]}
	}
	return args
}

// matmulKernel is C[n,n] = A[n,n] B[n,n].
var matmulKernel = &kernel{
	name:     "matmul",
	defaultN: 1024,
	shapes:   func(n, _ int) ([][]int, []int) { return [][]int{{n, n}, {n, n}}, []int{n, n} },
	body: func(f *lower.Function, v []lower.Value) []lower.Value {
		return []lower.Value{f.MatMul(v[0], v[1])}
	},
	flops:   func(n, _ int) float64 { return 2 * math.Pow(float64(n), 3) },
	divisor: func(d int) int { return d },
	strategies: []strategy{
		// Rows of A over every device, B replicated: data parallelism.
		{"rows", []mesh.PartitionSpec{mesh.P(xy, nil), mesh.P()}, mesh.P(xy, nil)},
		// Rows of A over x, columns of B over y: every device computes its block of C alone.
		{"rows x cols", []mesh.PartitionSpec{mesh.P("x", nil), mesh.P(nil, "y")}, mesh.P("x", "y")},
		// The contracted dimension over y: partial products, summed by an all-reduce over y.
		{"contract y", []mesh.PartitionSpec{mesh.P("x", "y"), mesh.P("y", nil)}, mesh.P("x", nil)},
		// Both operands stored 2-D blocked (as a memory-bound program keeps them): XLA moves
		// blocks to compute C in the same layout.
		{"2-D blocks", []mesh.PartitionSpec{mesh.P("x", "y"), mesh.P("x", "y")}, mesh.P("x", "y")},
	},
	check: func(out []float32, ins [][]float32, n, _ int) error {
		return checkProduct(out, ins[0], ins[1], n, n, n)
	},
}

// mlpKernel is one MLP layer, y[n,n] = relu(x[n,n] W1[n,4n]) W2[4n,n]: batch n, width n,
// hidden width 4n.
var mlpKernel = &kernel{
	name:     "mlp",
	defaultN: 512,
	shapes: func(n, _ int) ([][]int, []int) {
		return [][]int{{n, n}, {n, 4 * n}, {4 * n, n}}, []int{n, n}
	},
	body: func(f *lower.Function, v []lower.Value) []lower.Value {
		h := f.MatMul(v[0], v[1])
		h = f.Max(h, f.Constant(float32(0)))
		return []lower.Value{f.MatMul(h, v[2])}
	},
	flops:   func(n, _ int) float64 { return 2 * 2 * 4 * math.Pow(float64(n), 3) },
	divisor: func(d int) int { return d },
	strategies: []strategy{
		// The batch over every device, weights replicated.
		{"data parallel", []mesh.PartitionSpec{mesh.P(xy, nil), mesh.P(), mesh.P()}, mesh.P(xy, nil)},
		// Megatron: the batch over x, the hidden layer over y (W1 by columns, W2 by rows); one
		// all-reduce over y per layer.
		{"megatron", []mesh.PartitionSpec{mesh.P("x", nil), mesh.P(nil, "y"), mesh.P("y", nil)}, mesh.P("x", nil)},
		// FSDP: batch and weights split over every device; weights gathered for the product.
		{"fsdp", []mesh.PartitionSpec{mesh.P(xy, nil), mesh.P(xy, nil), mesh.P(xy, nil)}, mesh.P(xy, nil)},
	},
	check: func(out []float32, ins [][]float32, n, _ int) error {
		x, w1, w2 := ins[0], ins[1], ins[2]
		h := 4 * n
		for k := range 4 {
			i := (k*7919 + 3) % n
			hidden := make([]float64, h)
			for c := range h {
				for l := range n {
					hidden[c] += float64(x[i*n+l]) * float64(w1[l*h+c])
				}
				hidden[c] = math.Max(hidden[c], 0)
			}
			for m := range 4 {
				j := (m*104729 + k) % n
				var want, mag float64
				for c := range h {
					want += hidden[c] * float64(w2[c*n+j])
					mag += math.Abs(hidden[c] * float64(w2[c*n+j]))
				}
				if got := float64(out[i*n+j]); math.Abs(got-want) > 1e-3*mag+1e-5 {
					return fmt.Errorf("mlp: y[%d,%d] = %g, want %g", i, j, got, want)
				}
			}
		}
		return nil
	},
}

// attentionHeadDim is the width of one attention head.
const attentionHeadDim = 64

// attentionKernel is softmax(q kᵀ/√64) v for d heads (one per device) of n tokens:
// q, k, v and the result are f32[d,n,64].
var attentionKernel = &kernel{
	name:     "attention",
	defaultN: 512,
	shapes: func(n, d int) ([][]int, []int) {
		s := []int{d, n, attentionHeadDim}
		return [][]int{s, s, s}, s
	},
	body: func(f *lower.Function, v []lower.Value) []lower.Value {
		q, k, val := v[0], v[1], v[2]
		dims := q.Shape().Dims()
		h, s := dims[0], dims[1]
		scores := f.DotGeneral(q, k, lower.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0},
			LhsContracting: []int{2}, RhsContracting: []int{2}}) // [h, s, s]
		scores = f.Mul(scores, f.Constant(float32(1/math.Sqrt(attentionHeadDim))))
		top := f.BroadcastInDim(f.ReduceMax(scores, 2), []int{h, s, s}, []int{0, 1})
		e := f.Exp(f.Sub(scores, top))
		p := f.Div(e, f.BroadcastInDim(f.Sum(e, 2), []int{h, s, s}, []int{0, 1}))
		return []lower.Value{f.DotGeneral(p, val, lower.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0},
			LhsContracting: []int{2}, RhsContracting: []int{1}})}
	},
	flops:   func(n, d int) float64 { return 4 * float64(d) * float64(n) * float64(n) * attentionHeadDim },
	divisor: func(d int) int { return d },
	strategies: []strategy{
		// One head per device: no communication.
		{"heads", []mesh.PartitionSpec{mesh.P(xy, nil, nil), mesh.P(xy, nil, nil), mesh.P(xy, nil, nil)}, mesh.P(xy, nil, nil)},
		// Heads over x, queries over y; keys and values replicated over y.
		{"heads x queries", []mesh.PartitionSpec{mesh.P("x", "y", nil), mesh.P("x", nil, nil), mesh.P("x", nil, nil)}, mesh.P("x", "y", nil)},
		// Every tensor split by tokens over every device (sequence parallelism): keys and
		// values are gathered.
		{"sequence", []mesh.PartitionSpec{mesh.P(nil, xy, nil), mesh.P(nil, xy, nil), mesh.P(nil, xy, nil)}, mesh.P(nil, xy, nil)},
	},
	check: func(out []float32, ins [][]float32, n, d int) error {
		q, k, v := ins[0], ins[1], ins[2]
		const dh = attentionHeadDim
		at := func(t []float32, h, i, c int) float64 { return float64(t[(h*n+i)*dh+c]) }
		for sample := range 8 {
			h, i := sample%d, (sample*7919+5)%n
			p := make([]float64, n)
			top := math.Inf(-1)
			for j := range n {
				for c := range dh {
					p[j] += at(q, h, i, c) * at(k, h, j, c)
				}
				p[j] /= math.Sqrt(dh)
				top = math.Max(top, p[j])
			}
			var sum float64
			for j := range p {
				p[j] = math.Exp(p[j] - top)
				sum += p[j]
			}
			for c := 0; c < dh; c += 9 {
				var want float64
				for j := range n {
					want += p[j] / sum * at(v, h, j, c)
				}
				if got := float64(out[(h*n+i)*dh+c]); math.Abs(got-want) > 1e-4 {
					return fmt.Errorf("attention: out[%d,%d,%d] = %g, want %g", h, i, c, got, want)
				}
			}
		}
		return nil
	},
}

// checkProduct compares 64 entries of c[r,k], spread over the matrix, with a[r,m]·b[m,k]
// computed on the host in float64, so that a benchmark never times a wrong product.
func checkProduct(c, a, b []float32, r, m, k int) error {
	if len(c) != r*k {
		return fmt.Errorf("product has %d elements, want %d", len(c), r*k)
	}
	for s := range 64 {
		i, j := (s*7919)%r, (s*104729+s/8)%k
		var want, mag float64
		for l := range m {
			want += float64(a[i*m+l]) * float64(b[l*k+j])
			mag += math.Abs(float64(a[i*m+l]) * float64(b[l*k+j]))
		}
		if got := float64(c[i*k+j]); math.Abs(got-want) > 1e-4*max(1, mag) {
			return fmt.Errorf("product C[%d,%d] = %g, want %g", i, j, got, want)
		}
	}
	return nil
}

// programKey names the program strategy s makes on mesh m, so that the sweep times each
// program once: mesh axes of size 1 are left out, and a dimension split over every device in
// mesh order ("x" of 8x1, ("x", "y") of 2x4) reads the same on every mesh shape, which then
// does not enter the key unless another dimension is split over part of the devices.
func programKey(s strategy, m mesh.Mesh) string {
	partial := false
	spec := func(p mesh.PartitionSpec) string {
		var dims []string
		for _, d := range p.Dims() {
			var keep []string
			size := 1
			for _, a := range d.Axes() {
				if n, _ := m.AxisSize(a); n > 1 {
					keep = append(keep, a)
					size *= n
				}
			}
			switch {
			case len(keep) == 0:
				dims = append(dims, "None")
			case size == m.Size() && slices.IsSortedFunc(keep, func(a, b string) int { return m.AxisIndex(a) - m.AxisIndex(b) }):
				dims = append(dims, "all")
			default:
				dims = append(dims, strings.Join(keep, "*"))
				partial = true
			}
		}
		for len(dims) > 0 && dims[len(dims)-1] == "None" {
			dims = dims[:len(dims)-1] // P('x', None) is P('x')
		}
		return "(" + strings.Join(dims, ",") + ")"
	}
	var parts []string
	for _, p := range s.in {
		parts = append(parts, spec(p))
	}
	key := strings.Join(append(parts, spec(s.out)), " ")
	if partial {
		key = meshName(m) + " " + key
	}
	return key
}
