package lower_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// FuzzTypedOps builds programs from the fuzzer's bytes on a 2x4 mesh of Explicit axes (or a
// mixed one): arguments of random shapes and shardings, then a run of ops with random
// parameters, each through the sharding rules. Whatever the bytes, Build returns (no panic),
// and an error it returns is a typed one of package lower.
func FuzzTypedOps(f *testing.F) {
	f.Add([]byte{0, 2, 8, 4, 1, 2, 4, 8, 3, 0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{1, 1, 16, 2, 5, 9, 0, 0, 2, 1, 6, 7, 8, 9, 10})
	f.Add([]byte{0, 3, 4, 4, 2, 2, 4, 4, 1, 3, 4, 4, 0, 11, 12, 13, 14, 15, 3, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &byteReader{data: data}
		types := []mesh.AxisType{mesh.Explicit, mesh.Explicit}
		if r.next()%2 == 1 {
			types[1] = mesh.Auto
		}
		m := withTypes(mesh.MustNew(mesh.SimDevices(8), []int{2, 4}, "X", "Y"), types...)
		mod := lower.NewModule("fuzz")
		fn := mod.Main()
		specs := [][]any{{}, {"X"}, {nil, "Y"}, {"X", "Y"}, {"Y", "X"}, {[]string{"X", "Y"}}, {nil, "X"}, {"Y"}}
		var vals []lower.Value
		for range 1 + r.next()%3 {
			rank := 1 + int(r.next()%3)
			dims := make([]int, rank)
			for i := range dims {
				dims[i] = []int{1, 2, 4, 8, 16}[r.next()%5]
			}
			spec := specs[int(r.next())%len(specs)]
			if len(spec) > rank {
				spec = spec[:rank]
			}
			s, err := mesh.NewNamedSharding(m, mesh.P(spec...))
			if err != nil || s.CheckShape(dims) != nil {
				s, _ = mesh.NewNamedSharding(m, mesh.P())
			}
			vals = append(vals, fn.ShardedArg(lower.NewShape(dtypes.Float32, dims...), s))
		}
		pick := func() lower.Value { return vals[int(r.next())%len(vals)] }
		for range r.next() % 8 {
			x := pick()
			rank := x.Shape().Rank()
			var v lower.Value
			switch r.next() % 24 {
			case 0:
				v = fn.Add(x, pick())
			case 1:
				v = fn.Mul(x, x)
			case 2:
				if rank >= 1 {
					v = fn.DotGeneral(x, pick(), lower.DotDims{LhsContracting: []int{rank - 1}, RhsContracting: []int{0}})
				}
			case 3:
				v = fn.Sum(x, int(r.next())%max(rank, 1))
			case 4:
				n := x.Shape().Size()
				v = fn.Reshape(x, []int{n}...)
				if n%2 == 0 && r.next()%2 == 0 {
					v = fn.Reshape(x, 2, n/2)
				}
			case 5:
				perm := make([]int, rank)
				for i := range perm {
					perm[i] = rank - 1 - i
				}
				v = fn.Transpose(x, perm...)
			case 6:
				if rank >= 1 {
					lim := x.Shape().Dims()
					lim[0] = max(1, lim[0]/2)
					v = fn.Slice(x, make([]int, rank), lim, nil)
				}
			case 7:
				v = fn.Concatenate(0, x, pick())
			case 8:
				v = fn.Reshard(x, mustNamed(m, firstEntry(specs[int(r.next())%len(specs)], rank)))
			case 9:
				v = fn.DotGeneralOut(x, pick(), lower.DotDims{LhsContracting: []int{rank - 1}, RhsContracting: []int{0}},
					lower.Out(mesh.P(), []string{"X", "Y"}[r.next()%2]))
			case 10:
				v = fn.Exp(x)
			case 11:
				v = fn.ShardingConstraint(x, mustNamed(m, firstEntry(specs[int(r.next())%len(specs)], rank)))
			case 12:
				dims := append([]int{2}, x.Shape().Dims()...)
				bd := make([]int, rank)
				for i := range bd {
					bd[i] = i + 1
				}
				v = fn.BroadcastInDim(x, dims, bd)
			case 13:
				v = fn.Select(fn.Greater(x, pick()), x, pick())
			case 14:
				if rank >= 1 {
					lo := make([]int, rank)
					lo[0] = int(r.next() % 3)
					v = fn.Pad(x, fn.Constant(float32(0)), lo, make([]int, rank), make([]int, rank))
				}
			case 15:
				if rank >= 1 {
					starts := make([]lower.Value, rank)
					for i := range starts {
						starts[i] = fn.Constant(int32(r.next() % 4))
					}
					sizes := x.Shape().Dims()
					sizes[0] = max(1, sizes[0]/int(1+r.next()%3))
					v = fn.DynamicSlice(x, starts, sizes)
				}
			case 16:
				if rank >= 1 {
					v = fn.Argmax(x, int(r.next())%rank, dtypes.Int32)
				}
			case 17:
				if rank >= 1 {
					v = fn.Cumsum(x, int(r.next())%rank, false)
				}
			case 18:
				out := fn.ForLoop(2, []lower.Value{x}, func(g *stablehlo.Function, _ lower.Value, c []lower.Value) []lower.Value {
					if r.next()%3 == 0 {
						return []lower.Value{lower.FunctionOf(g).Reshard(c[0], mustNamed(m, firstEntry(specs[int(r.next())%len(specs)], rank)))}
					}
					return []lower.Value{g.Add(c[0], pick())}
				})
				v = out[0]
			case 19:
				p := fn.Arg(lower.NewShape(dtypes.Bool))
				out := fn.If(p, func(g *stablehlo.Function) []lower.Value { return []lower.Value{g.Neg(x)} },
					func(g *stablehlo.Function) []lower.Value { return []lower.Value{pick()} })
				v = out[0]
			case 20:
				v = fn.AutoAxes(nil, []mesh.NamedSharding{mustNamed(m, nil)}, func(a []lower.Value) []lower.Value {
					return []lower.Value{fn.Add(a[0], a[0])}
				}, x)[0]
			case 21:
				if rank >= 1 {
					idx := fn.Iota(lower.NewShape(dtypes.Int32, 2, 1), 0)
					dims := x.Shape().Dims()
					dims[0] = 1
					v = fn.Gather(x, idx, stablehlo.GatherParams{Dims: stablehlo.GatherDims{OffsetDims: seqFrom(1, rank-1),
						CollapsedSliceDims: []int{0}, StartIndexMap: []int{0}, IndexVectorDim: 1}, SliceSizes: dims})
				}
			case 22:
				v = fn.FullOut(x.Shape(), float32(1), lower.Out(mesh.P(firstEntry(specs[int(r.next())%len(specs)], rank)...)))
			case 23:
				outs := fn.ShardMap(m.Abstract(), nil, []mesh.PartitionSpec{mesh.P()}, nil,
					func(g *lower.Function, b []lower.Value) []lower.Value { return []lower.Value{g.Psum(b[0], "X", "Y")} }, x)
				v = outs[0]
			}
			if v.Valid() {
				vals = append(vals, v)
				_ = fn.TypeOf(v).String()
			}
		}
		fn.Return(vals[len(vals)-1])
		_, err := mod.Build()
		if err == nil {
			return
		}
		var oe *lower.OpError
		if !errors.As(err, &oe) {
			t.Fatalf("an error that is not an *OpError: %v", err)
		}
	})
}

// seqFrom is start, start+1, ..., n values.
func seqFrom(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// firstEntry is spec cut to at most one entry (and to rank).
func firstEntry(spec []any, rank int) []any { return spec[:min(len(spec), rank, 1)] }

// mustNamed is spec on m (every spec of the fuzzer's list is valid on it).
func mustNamed(m mesh.Mesh, spec []any) mesh.NamedSharding {
	s, err := mesh.NewNamedSharding(m, mesh.P(spec...))
	if err != nil {
		panic(err)
	}
	return s
}

// byteReader hands out the fuzzer's bytes, then zeros.
type byteReader struct {
	data []byte
	pos  int
}

func (r *byteReader) next() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	r.pos++
	return r.data[r.pos-1]
}
