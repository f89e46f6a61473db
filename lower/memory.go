package lower

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// PlacementTarget is the custom call jax.jit puts on each result of a program whose arguments
// or results live outside device memory: its `_xla_buffer_placement` frontend attribute names
// the memory kind the result is to be placed in.
const PlacementTarget = "annotate_device_placement"

// memoryKindOf is the memory kind of an entry sharding: the device's memory when none is said.
func memoryKindOf(s *mesh.NamedSharding) string {
	if s == nil || s.MemoryKind() == "" {
		return mesh.MemoryDevice
	}
	return s.MemoryKind()
}

// annotateMemory writes @main's memory kinds as jax.jit does when any argument or result
// sharding names a memory other than the device's (JAX's all_default_mem_kind is false):
// `mhlo.memory_kind` on every argument and result, and on every returned value an
// annotate_device_placement custom call naming its result's kind. Otherwise it writes nothing.
// A value placed in a memory inside the program (PutInMemory, DevicePut) marks the edges too,
// all in device memory if need be (JAX's transfers in the jaxpr). Attribute dictionaries are
// kept in name order, as MLIR prints them.
func (m *Module) annotateMemory(f *Function) error {
	if !m.placed && !slices.ContainsFunc(f.argSh, isHostKind) && !slices.ContainsFunc(f.resSh, isHostKind) {
		return nil
	}
	for i := range f.Args() {
		attrs := append(f.ArgAttrs(i), stablehlo.Attr{Name: "mhlo.memory_kind", Value: strconv.Quote(memoryKindOf(f.argSh[i]))})
		for _, a := range attrs {
			f.SetArgAttr(i, a.Name, "")
		}
		slices.SortStableFunc(attrs, func(a, b stablehlo.Attr) int { return cmp.Compare(a.Name, b.Name) })
		for _, a := range attrs {
			f.SetArgAttr(i, a.Name, a.Value)
		}
	}
	kinds := make([]string, len(f.Results()))
	for i := range kinds {
		kinds[i] = memoryKindOf(f.resSh[i])
		attrs := append(f.ResultAttrs(i), stablehlo.Attr{Name: "mhlo.memory_kind", Value: strconv.Quote(kinds[i])})
		for _, a := range attrs {
			f.SetResultAttr(i, a.Name, "")
		}
		slices.SortStableFunc(attrs, func(a, b stablehlo.Attr) int { return cmp.Compare(a.Name, b.Name) })
		for _, a := range attrs {
			f.SetResultAttr(i, a.Name, a.Value)
		}
	}
	f.RewrapResults(func(i int, v Value) Value { return f.placement(v, kinds[i]) })
	return nil // a failure is recorded in the module; Build returns it
}

// isHostKind reports whether an entry sharding names a memory other than the device's.
func isHostKind(s *mesh.NamedSharding) bool { return memoryKindOf(s) != mesh.MemoryDevice }

// memoryKinds are the memory kinds a value can be placed in.
var memoryKinds = []string{mesh.MemoryDevice, mesh.MemoryPinnedHost, mesh.MemoryUnpinnedHost}

// PutInMemory returns x placed in the memory of the given kind (mesh.MemoryPinnedHost,
// mesh.MemoryUnpinnedHost, mesh.MemoryDevice), as jax.device_put(x, jax.memory.Space.Host)
// inside jax.jit lowers for GPUs and TPUs: an annotate_device_placement call, which XLA's
// host offloader turns into a copy. It is how a program offloads a value to host memory (an
// activation kept for the backward pass, optimizer state) and brings it back before use;
// the two calls in turn, with work between them, let XLA overlap the copies with it. Values
// in host memory are for keeping: compute on them after bringing them back.
//
// A program that places any value marks its edges as jax.jit does (mhlo.memory_kind on every
// argument and result), so plugins older than PJRT API 0.115 refuse it (pjrt.MemorySpacesMinor).
// JAX lowers the same call on CPU to nothing; the CPU plugin of API 0.115 runs the placement.
// Its transpose (package autodiff) places the cotangent back in x's memory. A kind other than
// the three records an error wrapping mesh.ErrMemoryKind.
func (f *Function) PutInMemory(x Value, kind string) Value {
	if !slices.Contains(memoryKinds, kind) {
		f.Fail(PlacementTarget, 0, x, &mesh.MemoryKindError{Kind: kind, Valid: slices.Clone(memoryKinds)})
		return Value{}
	}
	f.m.placed = true
	return f.placement(x, kind)
}

// DevicePut returns x laid out as s and placed in s's memory, as jax.device_put(x, s) inside
// jax.jit lowers for GPUs and TPUs: a sharding constraint, then (when s names host memory,
// or the program has placed values before) an annotate_device_placement call naming s's
// memory kind. A sharding over a concrete mesh in device memory says "device". Errors as for
// ShardingConstraint and PutInMemory.
func (f *Function) DevicePut(x Value, s mesh.NamedSharding) Value {
	v := f.ShardingConstraint(x, s)
	kind := s.MemoryKind()
	switch {
	case !v.Valid():
		return Value{}
	case kind == "" || (kind == mesh.MemoryDevice && !f.m.placed):
		return v
	}
	return f.PutInMemory(v, kind)
}

// placement adds the annotate_device_placement call placing v in memory of kind, and records
// the kind of its result.
func (f *Function) placement(v Value, kind string) Value {
	r := f.CustomCall(PlacementTarget, []Value{v}, []Shape{v.Shape()},
		stablehlo.Attr{Name: "backend_config", Value: `""`},
		stablehlo.Attr{Name: "has_side_effect", Value: "true"},
		stablehlo.Attr{Name: "mhlo.frontend_attributes", Value: "{_xla_buffer_placement = " + strconv.Quote(kind) + "}"})[0]
	if r.Valid() {
		if f.m.memory == nil {
			f.m.memory = make(map[stablehlo.Value]string)
		}
		f.m.memory[r] = kind
	}
	return r
}

// memoryOf returns the memory kind of v as far as the module knows it: that of a placed value
// or of an argument of @main in host memory; device memory otherwise.
func (m *Module) memoryOf(v Value) string {
	if k, ok := m.memory[v]; ok {
		return k
	}
	return mesh.MemoryDevice
}

// placementRule transposes a placement: the cotangent goes back to the memory the operand was
// in (JAX's device_put transpose moves it to the source).
func placementRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	f := FunctionOf(b.Function())
	if f == nil {
		return b.Fail(op, "annotate_device_placement outside a lower module")
	}
	return []Value{f.placement(cts[0], f.m.memoryOf(op.Operands()[0]))}
}

// ComputeOnHost runs body on the host CPU instead of the device, like a function decorated with
// jax.experimental.compute_on.compute_on("device_host") (its out_memory_spaces in device
// memory): body builds a private function @compute_on (@compute_on_1, ... for later ones) of
// args' shapes, called with the frontend attribute `_xla_compute_type = "host"`, which XLA's
// host offloading runs on the host. It returns the call's results, each placed in device memory
// by an annotate_device_placement call (JAX's out_memory_spaces), as JAX lowers them; unlike
// PutInMemory, that does not mark the program's edges. On the CPU plugins the
// device is the host already and the call runs as any other. The body's ops are not marked
// one by one as JAX marks them; XLA reads the call's mark. Its gradient (package autodiff)
// replays the body at the call site, on the device. Under sharding in types the body computes
// on its operands' types and the results take the types the body returns. Plugins older than
// PJRT API 0.115 refuse the program, for its placement calls (pjrt.MemorySpacesMinor).
func (f *Function) ComputeOnHost(body func(g *Function, args []Value) []Value, args ...Value) []Value {
	name := "compute_on"
	if n := f.m.hostCalls; n > 0 {
		name += "_" + strconv.Itoa(n)
	}
	f.m.hostCalls++
	g := f.m.Func(name)
	in := make([]Value, len(args))
	for i, a := range args {
		if !a.Valid() {
			f.Failf("func.call", i, Value{}, ErrFunction, "ComputeOnHost: argument %d is the zero Value", i)
			return make([]Value, len(args))
		}
		in[i] = g.Arg(a.Shape())
		if tg := f.m.typing; tg != nil {
			if t, ok := f.m.typeOf(a); ok {
				tg.types[in[i]] = t // the body computes on the operands' types, as JAX types it
			}
		}
	}
	g.Return(body(g, in)...)
	out := f.Function.CallWith(g.Function, []stablehlo.Attr{{Name: "mhlo.frontend_attributes", Value: `{_xla_compute_type = "host"}`}}, args...)
	for i, r := range out {
		if r.Valid() {
			out[i] = f.placement(r, mesh.MemoryDevice) // the results back in device memory, as JAX places them
		}
	}
	return out
}
