package hostile

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func mesh42(h *H, c *pjrt.Client) mesh.Mesh {
	m, err := mesh.New(jit.Devices(c), []int{4, 2}, "x", "y")
	h.Must(err)
	return m
}

func sharding(h *H, m mesh.Mesh, spec mesh.PartitionSpec) mesh.NamedSharding {
	s, err := mesh.NewNamedSharding(m, spec)
	h.Must(err)
	return s
}

// put is jit.Put that must succeed; the array is closed when the case ends.
func put(h *H, c *pjrt.Client, flat any, shape []int, s mesh.NamedSharding) *jit.Array {
	a, err := jit.Put(c, flat, shape, s)
	h.Must(err)
	h.Cleanup(func() { a.Close() })
	return a
}

func arange(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i)
	}
	return out
}

func doubled(n int) []float32 {
	out := arange(n)
	for i := range out {
		out[i] *= 2
	}
	return out
}

var double jit.Body = func(f *lower.Function, a []lower.Value) []lower.Value {
	return []lower.Value{f.Mul(a[0], f.Constant(float32(2)))}
}

// callHost calls f and returns its first result on the host, closing every result.
func callHost(ctx context.Context, f *jit.Function, c *pjrt.Client, args ...*jit.Array) (any, error) {
	outs, err := f.CallContext(ctx, c, args...)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, o := range outs {
			o.Close()
		}
	}()
	if len(outs) == 0 {
		return nil, errors.New("no results")
	}
	return outs[0].ToHost()
}

// doubles checks that f doubles the 8x2 array x on c.
func doubles(f *jit.Function, c *pjrt.Client, x *jit.Array) error {
	got, err := callHost(context.Background(), f, c, x)
	if err != nil {
		return err
	}
	if want := doubled(16); !slices.Equal(got.([]float32), want) {
		return wrongf("got %v, want %v", got, want)
	}
	return nil
}

// x42 puts arange(16) as an 8x2 array sharded P("x", "y") over the 4x2 mesh of c.
func x42(h *H, c *pjrt.Client) *jit.Array {
	return put(h, c, arange(16), []int{8, 2}, sharding(h, mesh42(h, c), mesh.P("x", "y")))
}

func jitCase(name string, cl class, entry string, run func(h *H, c *pjrt.Client) error, want ...any) *hcase {
	return &hcase{name: name, class: cl, entry: entry, group: "jit", want: is(want...),
		run: func(h *H) error { return run(h, h.Client()) }}
}

// namedAxes runs double over a 2x2x2 mesh with the given axis names, with the partitioner p.
func namedAxes(p lower.Partitioner, names ...string) func(h *H, c *pjrt.Client) error {
	return func(h *H, c *pjrt.Client) error {
		m, err := mesh.New(jit.Devices(c), []int{2, 2, 2}, names...)
		if err != nil {
			return err
		}
		x := put(h, c, arange(16), []int{8, 2}, sharding(h, m, mesh.P([]string{names[0], names[1]}, names[2])))
		f := jit.New("names-"+p.String(), double, jit.WithPartitioner(p), jit.OutSpecs(mesh.P(names[1], names[2])))
		defer f.Close()
		return doubles(f, c, x)
	}
}

func jitCases() []*hcase {
	nilErr := []any{"jit.ErrNil", jit.ErrNil}
	shardErr := []any{"jit.ErrShard", jit.ErrShard}
	callback := func(name string, data func(mesh.Index) (any, error), want ...any) *hcase {
		return jitCase("jit.FromCallback: "+name, classSilent, "jit.FromCallback", func(h *H, c *pjrt.Client) error {
			a, err := jit.FromCallback(c, []int{8, 2}, dtypes.Float32, sharding(h, mesh42(h, c), mesh.P("x", "y")), data)
			if err == nil {
				a.Close()
			}
			return err
		}, want...)
	}
	// shards returns one 2x1 float32 buffer per device of the 4x2 mesh, in mesh order, closed
	// when the case ends.
	shards := func(h *H, c *pjrt.Client) (mesh.NamedSharding, []*pjrt.Buffer) {
		s := sharding(h, mesh42(h, c), mesh.P("x", "y"))
		m, _ := s.Mesh()
		var bufs []*pjrt.Buffer
		for _, d := range m.Devices() {
			b, err := c.BufferFromHost(d.(*pjrt.Device), []float32{1, 2}, []int{2, 1})
			h.Must(err)
			h.Cleanup(func() { b.Close() })
			bufs = append(bufs, b)
		}
		return s, bufs
	}
	fromShards := func(name string, cl class, edit func(h *H, c *pjrt.Client, bufs []*pjrt.Buffer) []*pjrt.Buffer, want ...any) *hcase {
		return jitCase("jit.FromShards: "+name, cl, "jit.FromShards", func(h *H, c *pjrt.Client) error {
			s, bufs := shards(h, c)
			a, err := jit.FromShards(c, []int{8, 2}, s, edit(h, c, bufs))
			if err == nil {
				a.Close()
			}
			return err
		}, want...)
	}
	userErr := errors.New("hostile: no data for this shard")
	return append([]*hcase{
		jitCase(`jit.New("my-fn"): a name MLIR must quote`, classNames, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("my-fn", double)
			defer f.Close()
			return doubles(f, c, x42(h, c))
		}),
		jitCase("jit Call: axes named with every character XLA takes (Shardy)", classNames, "jit Call", namedAxes(lower.Shardy, allPrintable(), " ", "?")),
		jitCase("jit Call: axes named with every character XLA takes (GSPMD)", classNames, "jit Call", namedAxes(lower.GSPMD, allPrintable(), `"`, "{}")),
		jitCase(`jit.New("a\\b"): a name XLA cannot take`, classNames, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New(`a\b`, double)
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "jit.ErrLowering", jit.ErrLowering, "mlir.ErrName", mlir.ErrName),
		jitCase(`jit.New("é"): a name outside ASCII`, classNames, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("é", double)
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "jit.ErrLowering", jit.ErrLowering, "mlir.ErrName", mlir.ErrName),
		jitCase("Array.ToHost: nil *Array", classPanics, "jit ToHost", func(h *H, c *pjrt.Client) error {
			var a *jit.Array
			_, err := a.ToHost()
			return err
		}, nilErr...),
		jitCase("Array methods: nil *Array", classPanics, "jit ToHost", func(h *H, c *pjrt.Client) error {
			var a *jit.Array
			for name, err := range map[string]error{"Close": a.Close(), "Wait": a.Wait()} {
				if !errors.Is(err, jit.ErrNil) {
					h.Failf("%s: %v", name, err)
				}
			}
			if _, err := a.ToHostBytes(); !errors.Is(err, jit.ErrNil) {
				h.Failf("ToHostBytes: %v", err)
			}
			if a.Shape() != nil || a.DType() != dtypes.InvalidDType || a.AddressableShards() != nil || a.IsFullyReplicated() || !a.IsClosed() || a.String() != "Array(nil)" {
				h.Failf("accessors of a nil *Array: %v %v %v %v %v %q", a.Shape(), a.DType(), a.AddressableShards(), a.IsFullyReplicated(), a.IsClosed(), a.String())
			}
			_, err := a.ToHostContext(context.Background())
			return err
		}, nilErr...),
		readsEvery("complex64", "complex<f32>", "(1.0, 2.0)", []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}),
		readsEvery("float8 e4m3fn", "f8E4M3FN", "1.0", []byte{0x38}),
		readsEvery("int4", "i4", "-3", []byte{0x0d}),
		readsEvery("uint2", "ui2", "1", []byte{0x01}),
		jitCase("Function.Call: nil *Function", classPanics, "jit Call", func(h *H, c *pjrt.Client) error {
			var f *jit.Function
			_, err := f.Call(c, x42(h, c))
			return err
		}, nilErr...),
		jitCase("Function methods: nil *Function", classPanics, "jit Call", func(h *H, c *pjrt.Client) error {
			var f *jit.Function
			for name, err := range map[string]error{"Close": f.Close(), "Release": f.Release(c)} {
				if !errors.Is(err, jit.ErrNil) {
					h.Failf("%s: %v", name, err)
				}
			}
			if _, err := f.CallContext(context.Background(), c); !errors.Is(err, jit.ErrNil) {
				h.Failf("CallContext: %v", err)
			}
			if f.Stats() != (jit.CacheStats{}) {
				h.Failf("Stats: %v", f.Stats())
			}
			_, err := f.Lower(mesh.MustAbstract([]int{8}, []string{"x"}))
			return err
		}, nilErr...),
		jitCase("Function.Call: a nil Body", classPanics, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("no_body", nil)
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, nilErr...),
		jitCase("Function.Call: a nil *Array argument", classPanics, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("nil_arg", double)
			defer f.Close()
			_, err := f.Call(c, nil)
			return err
		}, "jit.ErrArguments", jit.ErrArguments),
		jitCase("Function.Call: a nil client", classPanics, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("nil_client", double)
			defer f.Close()
			_, err := f.Call(nil, x42(h, c))
			return err
		}, "jit.ErrDevice", jit.ErrDevice),
		jitCase("Function.Call: a function with zero results", classPanics, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("nothing", func(*lower.Function, []lower.Value) []lower.Value { return nil })
			defer f.Close()
			x := x42(h, c)
			for range 2 {
				outs, err := f.Call(c, x)
				if err != nil {
					return err
				}
				if len(outs) != 0 {
					return wrongf("got %d results", len(outs))
				}
			}
			return nil
		}),
		jitCase("Function.Call: a Body returning a zero Value", classPanics, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("zero_value", func(*lower.Function, []lower.Value) []lower.Value { return []lower.Value{{}} })
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "jit.ErrLowering", jit.ErrLowering, "lower.ErrInvalidValue", lower.ErrInvalidValue),
		jitCase("Function.Call: a Body converting to complex64", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("to_complex", func(f *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{f.Convert(a[0], dtypes.Complex64)}
			})
			defer f.Close()
			got, err := callHost(context.Background(), f, c, x42(h, c))
			if err != nil {
				return err
			}
			want := make([]complex64, 16)
			for i := range want {
				want[i] = complex(float32(i), 0)
			}
			if !slices.Equal(got.([]complex64), want) {
				return wrongf("got %v, want %v", got, want)
			}
			return nil
		}),
		jitCase("Function.Call: a Body converting complex64 to float32", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("from_complex", func(f *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{f.Convert(f.Convert(a[0], dtypes.Complex64), dtypes.Float32)}
			})
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "jit.ErrLowering", jit.ErrLowering, "lower.ErrDType", lower.ErrDType),
		jitCase("jit.Donate(0, 0): one argument donated twice", classHangs, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("donate_twice", double, jit.Donate(0, 0))
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			g := jit.New("after_donate_twice", double)
			defer g.Close()
			if werr := doubles(g, c, x42(h, c)); werr != nil {
				h.Failf("a call after it: %v", werr)
			}
			return err
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		jitCase("jit.Donate(3) of one argument", classHangs, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("donate_3", double, jit.Donate(3))
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "jit.ErrArguments", jit.ErrArguments),
		jitCase("jit.Donate(0, 1): one array passed and donated twice", classHangs, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("donate_same", func(f *lower.Function, a []lower.Value) []lower.Value { return []lower.Value{f.Add(a[0], a[1])} }, jit.Donate(0, 1))
			defer f.Close()
			x := x42(h, c)
			_, err := f.Call(c, x, x)
			return err
		}, "jit.ErrArguments", jit.ErrArguments),
		jitCase("Function.Call: arguments on two device orders", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			rev := jit.Devices(c)
			slices.Reverse(rev)
			other, err := mesh.New(rev, []int{4, 2}, "x", "y")
			h.Must(err)
			y := put(h, c, arange(16), []int{8, 2}, sharding(h, other, mesh.P("x", "y")))
			f := jit.New("add", func(f *lower.Function, a []lower.Value) []lower.Value { return []lower.Value{f.Add(a[0], a[1])} })
			defer f.Close()
			_, err = f.Call(c, x42(h, c), y)
			return err
		}, "jit.ErrArguments", jit.ErrArguments),
		jitCase("jit.OutSpecs: one axis in two dimensions", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("bad_out", double, jit.OutSpecs(mesh.P("x", "x")))
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "mesh.ErrDuplicateAxis", mesh.ErrDuplicateAxis),
		jitCase("jit.InSpecs: two specs for one argument", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("in_specs", double, jit.InSpecs(mesh.P("x"), mesh.P("y")))
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "jit.ErrArguments", jit.ErrArguments),
		jitCase("jit.InSpecs: an Unconstrained dimension (jax.jit refuses it in in_shardings)", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("in_unconstrained", double, jit.InSpecs(mesh.P("x", mesh.Unconstrained)), jit.Reshard())
			defer f.Close()
			_, err := f.Call(c, x42(h, c))
			return err
		}, "mesh.ErrUnconstrained", mesh.ErrUnconstrained),
		jitCase("jit.Put: a nil client", classPanics, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.Put(nil, arange(16), []int{8, 2}, sharding(h, mesh42(h, c), mesh.P("x", "y")))
			return err
		}, "jit.ErrDevice", jit.ErrDevice),
		jitCase("jit.Put: 12 values for a 4x4 array", classSilent, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.Put(c, arange(12), []int{4, 4}, sharding(h, mesh42(h, c), mesh.P("x")))
			return err
		}, "pjrt.ErrHostData", pjrt.ErrHostData),
		jitCase("jit.Put: []string", classPanics, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.Put(c, []string{"a"}, []int{1}, sharding(h, mesh42(h, c), mesh.P()))
			return err
		}, "pjrt.ErrHostData", pjrt.ErrHostData),
		jitCase("jit.Put: 7 rows over 4 devices", classSilent, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.Put(c, arange(14), []int{7, 2}, sharding(h, mesh42(h, c), mesh.P("x")))
			return err
		}, "mesh.ErrIndivisible", mesh.ErrIndivisible),
		jitCase("jit.Put: shape 2^62 x 2^62, whose element count wraps to 0", classSilent, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.Put(c, arange(16), []int{1 << 62, 1 << 62}, sharding(h, mesh42(h, c), mesh.P()))
			if err != nil && strings.Contains(err.Error(), "(0 elements)") {
				h.Failf("the message reports the wrapped element count: %v", err)
			}
			return err
		}, "pjrt.ErrHostData", pjrt.ErrHostData),
		jitCase("jit.Put: shape (2^62+8) x 4 sharded 4 ways, whose element count wraps to 32", classSilent, "jit.Put", func(h *H, c *pjrt.Client) error {
			a, err := jit.Put(c, arange(32), []int{1<<62 + 8, 4}, sharding(h, mesh42(h, c), mesh.P("x")))
			if err == nil {
				a.Close()
			}
			return err
		}, "pjrt.ErrHostData", pjrt.ErrHostData),
		jitCase("jit.Put: a negative dimension", classPanics, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.Put(c, arange(16), []int{-8, -2}, sharding(h, mesh42(h, c), mesh.P()))
			return err
		}, "mesh.ErrShape", mesh.ErrShape),
		jitCase("jit.Put: a mesh of simulated devices", classSilent, "jit.Put", func(h *H, c *pjrt.Client) error {
			sim := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
			_, err := jit.Put(c, arange(16), []int{8, 2}, sharding(h, sim, mesh.P("x")))
			return err
		}, "jit.ErrDevice", jit.ErrDevice),
		jitCase("jit.Put: a zero NamedSharding", classPanics, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.Put(c, arange(16), []int{8, 2}, mesh.NamedSharding{})
			return err
		}, "mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
		jitCase("jit.PutBytes: element type DType(999)", classSilent, "jit.Put", func(h *H, c *pjrt.Client) error {
			_, err := jit.PutBytes(c, dtypes.DType(999), []int{8, 2}, make([]byte, 64), sharding(h, mesh42(h, c), mesh.P()))
			return err
		}, "pjrt.ErrHostData", pjrt.ErrHostData),
		jitCase("jit.FromCallback: a nil callback", classPanics, "jit.FromCallback", func(h *H, c *pjrt.Client) error {
			_, err := jit.FromCallback(c, []int{8, 2}, dtypes.Float32, sharding(h, mesh42(h, c), mesh.P("x")), nil)
			return err
		}, nilErr...),
		callback("a shard of the wrong size", func(mesh.Index) (any, error) { return arange(3), nil }, shardErr...),
		callback("a shard of the wrong element type", func(mesh.Index) (any, error) { return []int64{1, 2}, nil }, shardErr...),
		callback("a nil shard", func(mesh.Index) (any, error) { return nil, nil }, "pjrt.ErrHostData", pjrt.ErrHostData),
		callback("the callback's own error", func(mesh.Index) (any, error) { return nil, userErr }, "the callback's error", userErr),
		fromShards("7 buffers for 8 devices", classSilent, func(h *H, c *pjrt.Client, b []*pjrt.Buffer) []*pjrt.Buffer { return b[:7] }, shardErr...),
		fromShards("a buffer of the wrong shape", classSilent, func(h *H, c *pjrt.Client, b []*pjrt.Buffer) []*pjrt.Buffer {
			wrong, err := c.BufferFromHost(c.Devices()[3], []float32{1, 2}, []int{1, 2})
			h.Must(err)
			h.Cleanup(func() { wrong.Close() })
			return append(slices.Clone(b[:3]), append([]*pjrt.Buffer{wrong}, b[4:]...)...)
		}, shardErr...),
		fromShards("the buffers in reverse device order", classSilent, func(h *H, c *pjrt.Client, b []*pjrt.Buffer) []*pjrt.Buffer {
			r := slices.Clone(b)
			slices.Reverse(r)
			return r
		}, shardErr...),
		fromShards("a nil buffer", classPanics, func(h *H, c *pjrt.Client, b []*pjrt.Buffer) []*pjrt.Buffer {
			r := slices.Clone(b)
			r[5] = nil
			return r
		}, shardErr...),
		fromShards("a closed buffer", classOwnership, func(h *H, c *pjrt.Client, b []*pjrt.Buffer) []*pjrt.Buffer {
			b[2].Close()
			return b
		}, "pjrt.ErrClosed", pjrt.ErrClosed),
		jitCase("jit.FromShards: an error buffer reaches ToHost typed", classHangs, "jit.FromShards", func(h *H, _ *pjrt.Client) error {
			c := h.Client0115()
			m, err := mesh.New(jit.Devices(c), []int{2}, "x")
			h.Must(err)
			s := sharding(h, m, mesh.P("x"))
			good, err := c.BufferFromHost(c.Devices()[0], []float32{1, 2}, []int{1, 2})
			h.Must(err)
			bad, err := c.NewErrorBuffer(c.Devices()[1], shapes.Make(dtypes.Float32, 1, 2), pjrt.Aborted, "hostile shard")
			h.Must(err)
			a, err := jit.FromShards(c, []int{2, 2}, s, []*pjrt.Buffer{good, bad})
			if err != nil {
				good.Close()
				bad.Close()
				return fmt.Errorf("FromShards: %w", err)
			}
			defer a.Close()
			_, err = a.ToHost()
			return err
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		jitCase("Array.ToHost: after Close; Close twice", classOwnership, "jit ToHost", func(h *H, c *pjrt.Client) error {
			x := x42(h, c)
			h.Must(x.Close())
			if err := x.Close(); err != nil {
				h.Failf("a second Close: %v", err)
			}
			_, err := x.ToHost()
			return err
		}, "jit.ErrClosed", jit.ErrClosed),
		jitCase("jit.ReshardArray: to a sharding the shape does not divide", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			_, err := jit.ReshardArray(c, x42(h, c), sharding(h, mesh42(h, c), mesh.P(nil, "x")))
			return err
		}, "mesh.ErrIndivisible", mesh.ErrIndivisible),
		jitCase("jit.ValueAndGrad: a shard_map with all_gather in GSPMD mode", classPrograms, "jit Call", gatherGrad),
	}, append(exportedCases(), export012Cases()...)...)
}

// gatherGrad differentiates, in GSPMD mode, internal/oracletest's smap_all_gather program:
// sum(tanh(y) * w) for y = shard_map(a -> all_gather(a, 1, "model") * a[:, :1]) of a 4x8
// x sharded P(nil, "model") on a 2x4 ("data", "model") mesh, out_spec P("model", nil). Its
// module once made the plugin's XLA abort the process (a 0.0 in the inline manual body
// merged by CSE with one outside it); lower now calls a private function for the body, as
// JAX does. The loss and gradient are checked against the same formulas in float64 to 1e-5
// relative (float32 tanh and sums in XLA's order).
func gatherGrad(h *H, c *pjrt.Client) error {
	m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "data", "model")
	h.Must(err)
	abs := m.Abstract()
	pat := func(n, k int) []float32 { // internal/oracletest's pattern(dims, k, 8, 0)
		out := make([]float32, n)
		for i := range out {
			out[i] = float32((i*(7+2*k)+3*k)%17-8) / 8
		}
		return out
	}
	xs, ws := pat(32, 0), pat(128, 5)
	loss := func(f *lower.Function, a []lower.Value) lower.Value {
		y := f.ShardMap(abs, []mesh.PartitionSpec{mesh.P(nil, "model")}, []mesh.PartitionSpec{mesh.P("model", nil)}, nil,
			func(g *lower.Function, b []lower.Value) []lower.Value {
				gathered := g.AllGatherOver(b[0], 1, "model")
				col := g.BroadcastInDim(g.Slice(b[0], []int{0, 0}, []int{4, 1}, nil), gathered.Shape().Dims(), []int{0, 1})
				return []lower.Value{g.Mul(gathered, col)}
			}, a[0])[0]
		return f.Sum(f.Mul(f.Tanh(y), f.ArrayOf(dtypes.Float32, ws, 16, 8)))
	}
	spec := mesh.P(nil, "model")
	fn := jit.New("gather_grad", jit.ValueAndGrad(loss, 0), jit.InSpecs(spec), jit.OutSpecs(mesh.P(), spec),
		jit.WithPartitioner(lower.GSPMD))
	defer fn.Close()
	outs, err := fn.Call(c, put(h, c, xs, []int{4, 8}, sharding(h, m, spec)))
	if err != nil {
		return err
	}
	defer func() {
		for _, o := range outs {
			o.Close()
		}
	}()
	// y[4j+r][col] = x[r][col] * x[r][2j]; G = (1 - tanh(y)^2) * w.
	x := func(r, col int) float64 { return float64(xs[8*r+col]) }
	var wantLoss float64
	wantGrad := make([]float64, 32)
	for j := range 4 {
		for r := range 4 {
			for col := range 8 {
				i := 8*(4*j+r) + col
				t := math.Tanh(x(r, col) * x(r, 2*j))
				wantLoss += t * float64(ws[i])
				g := (1 - t*t) * float64(ws[i])
				wantGrad[8*r+col] += g * x(r, 2*j)
				wantGrad[8*r+2*j] += g * x(r, col)
			}
		}
	}
	got := make([][]float32, 2)
	for i, o := range outs {
		v, err := o.ToHost()
		if err != nil {
			return err
		}
		got[i] = v.([]float32)
	}
	near := func(a float32, b float64) bool { return math.Abs(float64(a)-b) <= 1e-5*math.Max(1, math.Abs(b)) }
	if len(got[0]) != 1 || !near(got[0][0], wantLoss) {
		return wrongf("loss %v, want %.7g", got[0], wantLoss)
	}
	for i, w := range wantGrad {
		if !near(got[1][i], w) {
			return wrongf("grad[%d] = %v, want %.7g (grad %v)", i, got[1][i], w, got[1])
		}
	}
	return nil
}

// Client0115 returns the child's client of the second pinned CPU plugin (PJRT C API 0.115),
// which has error buffers, with 2 devices.
func (h *H) Client0115() *pjrt.Client {
	const key = -115
	if c := h.clients[key]; c != nil {
		return c
	}
	path, err := pjrt.MultiProcessCPUPlugin()
	h.Must(err)
	c, err := pjrt.Open(pjrt.WithPlugin(path), pjrt.WithCPUDeviceCount(2))
	h.Must(err)
	h.clients[key] = c
	return c
}

// runawayCases leave a program running until their child ends: they run in a group of their
// own, where the spinning thread slows no other case.
func runawayCases() []*hcase {
	return []*hcase{{
		name: "Function.CloseContext and Client.CloseContext: a while loop that never ends, abandoned by its call", class: classHangs,
		entry: "jit Call", group: "runaway", leavesRunning: true,
		want: is("pjrt.ErrStillRunning", pjrt.ErrStillRunning), as: as[*pjrt.StillRunningError]("*pjrt.StillRunningError"),
		run: runawayThenClose,
	}}
}

// spin is a stablehlo.while whose condition, i == i, always holds: it never ends.
var spin jit.Body = func(f *lower.Function, a []lower.Value) []lower.Value {
	r := f.While([]lower.Value{f.Constant(int32(0)), a[0]},
		func(g *stablehlo.Function, c []stablehlo.Value) stablehlo.Value { return g.Equal(c[0], c[0]) },
		func(g *stablehlo.Function, c []stablehlo.Value) []stablehlo.Value {
			return []stablehlo.Value{g.Add(c[0], g.Constant(int32(1))), g.Add(c[1], g.Constant(float32(1)))}
		})
	return r[1:]
}

// runawayThenClose calls spin on one device (where the CPU plugin runs it inside the call),
// lets its deadline pass, closes the Function and then the client with deadlines, and checks
// that each returns in time, that later calls on them fail at once, and that other functions
// and clients still work. It returns the client's close error.
func runawayThenClose(h *H) error {
	c, err := pjrttest.Open(8) // not h.Fresh: it cannot be closed at the end of the child
	h.Must(err)
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	h.Must(err)
	x, err := jit.Put(c, arange(16), []int{8, 2}, sharding(h, m, mesh.P()))
	h.Must(err)
	f := jit.New("spin", spin)
	timed := func(what string, d time.Duration, call func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		start := time.Now()
		err := call(ctx)
		if took := time.Since(start); took > d+3*time.Second {
			h.Failf("%s returned after %v, its deadline was %v", what, took, d)
		}
		return err
	}
	// The deadline leaves time for the compilation, so that the loop is running when it passes.
	err = timed("CallContext", 5*time.Second, func(ctx context.Context) error { _, err := f.CallContext(ctx, c, x); return err })
	if !errors.Is(err, context.DeadlineExceeded) {
		h.Failf("CallContext: %v, want context.DeadlineExceeded", err)
	}
	err = timed("Function.CloseContext", time.Second, f.CloseContext)
	if !errors.Is(err, pjrt.ErrStillRunning) {
		h.Failf("Function.CloseContext: %v, want pjrt.ErrStillRunning", err)
	}
	if err := timed("a call on the closed Function", time.Second, func(ctx context.Context) error { _, err := f.CallContext(ctx, c, x); return err }); !errors.Is(err, jit.ErrClosed) {
		h.Failf("a call on the closed Function: %v, want jit.ErrClosed", err)
	}
	other := jit.New("double_beside_spin", double)
	defer other.Close()
	if err := doubles(other, c, x42(h, c)); err != nil {
		h.Failf("another Function on the same client: %v", err)
	}
	closeErr := timed("Client.CloseContext", time.Second, c.CloseContext)
	if err := timed("a call on the closed client", time.Second, func(ctx context.Context) error { _, err := other.CallContext(ctx, c, x); return err }); !errors.Is(err, pjrt.ErrClosed) {
		h.Failf("a call on the closed client: %v, want pjrt.ErrClosed", err)
	}
	if err := doubles(other, h.Client(), x42(h, h.Client())); err != nil {
		h.Failf("another client: %v", err)
	}
	return closeErr
}

func ownershipCases() []*hcase {
	own := func(name string, entry string, run func(h *H, c *pjrt.Client) error, want ...any) *hcase {
		return &hcase{name: name, class: classOwnership, entry: entry, group: "ownership", want: is(want...),
			run: func(h *H) error { return run(h, h.Client()) }}
	}
	return []*hcase{
		own("jit Call: one Function on two clients", "jit Call", func(h *H, c *pjrt.Client) error {
			c2 := h.Fresh(8)
			f := jit.New("two_clients", double)
			defer f.Close()
			x1, x2 := x42(h, c), x42(h, c2)
			for _, step := range []struct {
				c *pjrt.Client
				x *jit.Array
			}{{c, x1}, {c2, x2}, {c, x1}, {c2, x2}} {
				if err := doubles(f, step.c, step.x); err != nil {
					return err
				}
			}
			if st := f.Stats(); st.CompileMisses != 2 {
				return wrongf("stats %+v: want one compile per client", st)
			}
			x2.Close()
			h.Must(c2.Close())
			return doubles(f, c, x1)
		}),
		own("Function.Close: frees its executables; a later Call is refused", "jit Call", func(h *H, c *pjrt.Client) error {
			live := pjrt.LiveExecutables()
			f := jit.New("closing", double)
			x := x42(h, c)
			h.Must(doubles(f, c, x))
			if pjrt.LiveExecutables() != live+1 {
				h.Failf("%d live executables after one compile, want %d", pjrt.LiveExecutables(), live+1)
			}
			h.Must(f.Close())
			if pjrt.LiveExecutables() != live {
				h.Failf("%d live executables after Close, want %d", pjrt.LiveExecutables(), live)
			}
			if err := f.Close(); err != nil {
				h.Failf("a second Close: %v", err)
			}
			_, err := f.Call(c, x)
			return err
		}, "jit.ErrClosed", jit.ErrClosed),
		own("Function.Release: one client's executables, then a fresh compile", "jit Call", func(h *H, c *pjrt.Client) error {
			live := pjrt.LiveExecutables()
			f := jit.New("releasing", double)
			defer f.Close()
			x := x42(h, c)
			h.Must(doubles(f, c, x))
			h.Must(f.Release(c))
			if pjrt.LiveExecutables() != live {
				h.Failf("%d live executables after Release, want %d", pjrt.LiveExecutables(), live)
			}
			return doubles(f, c, x)
		}),
		own("Function.CallContext: a cancelled context", "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("cancelled", double)
			defer f.Close()
			x := x42(h, c)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := f.CallContext(ctx, c, x)
			if werr := doubles(f, c, x); werr != nil {
				h.Failf("a call after it: %v", werr)
			}
			return err
		}, "context.Canceled", context.Canceled),
		own("Function.CallContext: a 20 ms deadline on a long compile", "jit Call", func(h *H, c *pjrt.Client) error {
			m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
			h.Must(err)
			x := put(h, c, make([]float32, 64*64), []int{64, 64}, sharding(h, m, mesh.P()))
			f := jit.New(fmt.Sprintf("slow_%d", time.Now().UnixNano()), func(f *lower.Function, a []lower.Value) []lower.Value {
				y := a[0]
				for range 600 {
					y = f.Transpose(f.Sin(f.DotGeneral(y, a[0], lower.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}})), 1, 0)
				}
				return []lower.Value{y}
			})
			defer f.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = f.CallContext(ctx, c, x)
			if d := time.Since(start); d > 2*time.Second {
				h.Failf("CallContext returned after %v, not at the deadline", d)
			}
			got, cerr := callHost(context.Background(), f, c, x)
			if cerr != nil || !slices.Equal(got.([]float32), make([]float32, 64*64)) {
				h.Failf("the call after it: %v", cerr)
			}
			return err
		}, "context.DeadlineExceeded", context.DeadlineExceeded),
		// 256 MiB: the copy takes several ms even at memory speed, so the deadline falls inside it.
		own("jit.PutContext: a 1 ms deadline on a 256 MiB Put", "jit.Put", func(h *H, c *pjrt.Client) error {
			const n = 8192
			data := make([]float32, n*n)
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			a, err := jit.PutContext(ctx, c, data, []int{n, n}, sharding(h, mesh42(h, c), mesh.P("x", "y")))
			if err == nil {
				a.Close()
			}
			return err
		}, "context.DeadlineExceeded", context.DeadlineExceeded),
		own("jit.PutContext: a nil context", "jit.Put", func(h *H, c *pjrt.Client) error {
			var ctx context.Context // nil: the hostile input
			_, err := jit.PutContext(ctx, c, arange(16), []int{8, 2}, sharding(h, mesh42(h, c), mesh.P("x", "y")))
			return err
		}, "jit.ErrArguments", jit.ErrArguments),
		own("Array.ToHostContext: a 1 ms deadline on 256 MiB; the array stays intact", "jit ToHost", func(h *H, c *pjrt.Client) error {
			const n = 8192
			data := make([]float32, n*n)
			for i := range data {
				data[i] = float32(i % 1000)
			}
			a := put(h, c, data, []int{n, n}, sharding(h, mesh42(h, c), mesh.P("x", "y")))
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			_, err := a.ToHostContext(ctx)
			got, gerr := a.ToHost()
			if gerr != nil || !slices.Equal(got.([]float32), data) {
				h.Failf("ToHost after it: %v", gerr)
			}
			return err
		}, "context.DeadlineExceeded", context.DeadlineExceeded),
		own("Array.ToHost: its client closed", "jit ToHost", func(h *H, _ *pjrt.Client) error {
			c := h.Fresh(8)
			x := x42(h, c)
			h.Must(c.Close())
			_, err := x.ToHost()
			if cerr := x.Close(); cerr != nil {
				h.Failf("Close after the client closed: %v", cerr)
			}
			return err
		}, "pjrt.ErrClosed", pjrt.ErrClosed),
		own("Function.Call: on a closed client", "jit Call", func(h *H, _ *pjrt.Client) error {
			c := h.Fresh(8)
			x := x42(h, c)
			f := jit.New("closed_client", double)
			defer f.Close()
			h.Must(doubles(f, c, x))
			h.Must(c.Close())
			_, err := f.Call(c, x)
			return err
		}, "pjrt.ErrClosed", pjrt.ErrClosed),
		own("Function.Call: an array of another client", "jit Call", func(h *H, c *pjrt.Client) error {
			x := x42(h, h.Fresh(8))
			f := jit.New("other_client", double)
			defer f.Close()
			_, err := f.Call(c, x)
			return err
		}, "jit.ErrDevice", jit.ErrDevice),
		own("Function.Call: donated array used again", "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("donating", double, jit.Donate(0))
			defer f.Close()
			x := x42(h, c)
			outs, err := f.Call(c, x)
			h.Must(err)
			for _, o := range outs {
				o.Close()
			}
			_, err = f.Call(c, x)
			return err
		}, "jit.ErrClosed", jit.ErrClosed),
		own("Function.Close: while 8 goroutines call it", "jit Call", func(h *H, c *pjrt.Client) error {
			f := jit.New("busy", double)
			x := x42(h, c)
			h.Must(doubles(f, c, x))
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Go(func() {
					for range 20 {
						if err := doubles(f, c, x); err != nil {
							if !errors.Is(err, jit.ErrClosed) {
								errs <- err
							}
							return
						}
					}
				})
			}
			time.Sleep(5 * time.Millisecond)
			err := f.Close()
			wg.Wait()
			close(errs)
			for e := range errs {
				h.Failf("a call: %v", e)
			}
			return err
		}),
		own("jit Body: a panic with a value is this call's error, not cached", "jit Call", func(h *H, c *pjrt.Client) error {
			fail := true
			f := jit.New("moody", func(f *lower.Function, a []lower.Value) []lower.Value {
				if fail {
					panic("hostile user bug")
				}
				return double(f, a)
			})
			defer f.Close()
			x := x42(h, c)
			_, err := f.Call(c, x)
			fail = false
			if werr := doubles(f, c, x); werr != nil {
				h.Failf("the call after the Body was fixed: %v", werr)
			}
			return err
		}, "jit.ErrLowering", jit.ErrLowering),
		own("jit Body: a runtime error panics in the caller, and is not cached", "jit Call", func(h *H, c *pjrt.Client) error {
			bug := true
			f := jit.New("buggy", func(f *lower.Function, a []lower.Value) []lower.Value {
				if bug {
					return []lower.Value{a[len(a)]} // index out of range
				}
				return double(f, a)
			})
			defer f.Close()
			x := x42(h, c)
			var recovered any
			func() {
				defer func() { recovered = recover() }()
				_, _ = f.Call(c, x)
			}()
			if _, ok := recovered.(runtime.Error); !ok {
				return wrongf("the Body's index out of range reached the caller as %T %v, want a runtime.Error panic", recovered, recovered)
			}
			bug = false
			return doubles(f, c, x)
		}),
	}
}

// readsEvery reads back, with ToHostBytes, an array of an element type Go has no slice type
// for (complex64 aside), made by a real one-device program returning a constant of StableHLO
// element type elem: the read must return all four elements, each of the bytes elem (it
// returned 0 bytes and no error once, then an error until every type was read).
func readsEvery(name, elem, value string, want []byte) *hcase {
	return jitCase("Array.ToHostBytes: a "+name+" result", classSilent, "jit ToHost", func(h *H, c *pjrt.Client) error {
		typ := fmt.Sprintf("tensor<4x%s>", elem)
		text := fmt.Sprintf("module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"+
			"  func.func public @main() -> %[1]s {\n    %%0 = stablehlo.constant dense<%[2]s> : %[1]s\n"+
			"    return %%0 : %[1]s\n  }\n}\n", typ, value)
		dev := c.AddressableDevices()[0]
		exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: []int{dev.ID()}})
		h.Must(err)
		defer exe.Close()
		out, err := exe.Execute([][]*pjrt.Buffer{{}})
		h.Must(err)
		m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
		h.Must(err)
		a, err := jit.FromShards(c, []int{4}, sharding(h, m, mesh.P()), out[0])
		if err != nil {
			out[0][0].Close()
			h.Must(err)
		}
		defer a.Close()
		b, err := a.ToHostBytes()
		if err != nil {
			return err
		}
		if w := bytes.Repeat(want, 4); !bytes.Equal(b, w) {
			return wrongf("ToHostBytes of %s returned % x, want % x", a, b, w)
		}
		return nil
	})
}

// exportedCases runs each hostile artifact of bytecodeArtifacts through jit.FromExported and a
// call, as exported, with an argument of the artifact's float32[8] replicated on the 4x2 mesh:
// the call fails with the checker's error before XLA sees the module.
func exportedCases() []*hcase {
	var cases []*hcase
	for _, bc := range bytecodeClasses {
		cases = append(cases, jitCase("jit.FromExported: a module in bytecode: "+bc.artifact, bc.cl, "jit Call", func(h *H, c *pjrt.Client) error {
			e, err := jaxexport.Read(bytecodeArtifacts(h)[bc.artifact])
			h.Must(err)
			f, err := jit.FromExported(e)
			h.Must(err)
			defer f.Close()
			x := put(h, c, arange(8), []int{8}, sharding(h, mesh42(h, c), mesh.P()))
			out, err := f.Call(c, x)
			for _, o := range out {
				o.Close()
			}
			return err
		}, "pjrt.ErrCompile", pjrt.ErrCompile, bc.sentinel, bc.err))
	}
	return cases
}

// export012Program returns the artifact and the lowered text of a program JAX 0.12.0.1 exported
// (testdata/oracle/export012.json).
func export012Program(h *H, name string) (*jaxexport.Exported, string) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "oracle", "export012.json"))
	h.Must(err)
	var f struct {
		Programs []struct{ Name, Exported, StableHLO string }
	}
	h.Must(json.Unmarshal(raw, &f))
	for _, p := range f.Programs {
		if p.Name == name {
			b, err := base64.StdEncoding.DecodeString(p.Exported)
			h.Must(err)
			e, err := jaxexport.Read(b)
			h.Must(err)
			return e, p.StableHLO
		}
	}
	h.Failf("no program %q in export012.json", name)
	return nil, ""
}

// export012Cases: JAX 0.12's artifacts and text where xlamesh cannot follow them: a
// multi-platform artifact without the client's platform (the message used to blame "dimension
// variables"), and mesh-axes replica groups over a sub-axis (no dense form is written for them).
func export012Cases() []*hcase {
	return []*hcase{
		jitCase("jit.FromExported: a JAX 0.12 artifact for cuda and tpu only", classSilent, "jit Call", func(h *H, c *pjrt.Client) error {
			e, _ := export012Program(h, "times2_cuda_tpu")
			f, err := jit.FromExported(e)
			h.Must(err)
			defer f.Close()
			m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "X", "Y")
			h.Must(err)
			x := put(h, c, arange(32), []int{8, 4}, sharding(h, m, mesh.P("X", "Y")))
			out, err := f.Call(c, x)
			for _, o := range out {
				o.Close()
			}
			if err != nil && !strings.Contains(err.Error(), "[cuda tpu]") {
				h.Failf("the error does not name the artifact's platforms: %v", err)
			}
			return err
		}, "jit.ErrExternal", jit.ErrExternal),
		jitCase("jit.FromText: JAX 0.12 mesh-axes replica groups over a sub-axis, re-sharded", classPrograms, "jit Call", func(h *H, c *pjrt.Client) error {
			_, text := export012Program(h, "shard_map_psum")
			old := `axes = [#stablehlo.axis_ref<name = "Y">]`
			if !strings.Contains(text, old) {
				h.Failf("the psum's text lacks %s", old)
			}
			text = strings.Replace(text, old, `axes = [#stablehlo.axis_ref<name = "Y", sub_axis_info = #stablehlo.sub_axis_info<pre_size = 1, size = 2>>]`, 1)
			f, err := jit.FromText("psum", text, jit.InSpecs(mesh.P("X", "Y")))
			h.Must(err)
			defer f.Close()
			m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "X", "Y")
			h.Must(err)
			x := put(h, c, arange(32), []int{8, 4}, sharding(h, m, mesh.P("X", "Y")))
			out, err := f.Call(c, x)
			for _, o := range out {
				o.Close()
			}
			return err
		}, "jit.ErrLowering", jit.ErrLowering, "mlir.ErrReplicaGroups", mlir.ErrReplicaGroups),
	}
}
