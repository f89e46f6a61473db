package lower

import (
	"cmp"
	"slices"
	"strconv"

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
// Attribute dictionaries are kept in name order, as MLIR prints them.
func (m *Module) annotateMemory(f *Function) error {
	if !slices.ContainsFunc(f.argSh, isHostKind) && !slices.ContainsFunc(f.resSh, isHostKind) {
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
	f.RewrapResults(func(i int, v Value) Value {
		return f.CustomCall(PlacementTarget, []Value{v}, []Shape{v.Shape()},
			stablehlo.Attr{Name: "backend_config", Value: `""`},
			stablehlo.Attr{Name: "has_side_effect", Value: "true"},
			stablehlo.Attr{Name: "mhlo.frontend_attributes", Value: "{_xla_buffer_placement = " + strconv.Quote(kinds[i]) + "}"})[0]
	})
	return nil // a failure is recorded in the module; Build returns it
}

// isHostKind reports whether an entry sharding names a memory other than the device's.
func isHostKind(s *mesh.NamedSharding) bool { return memoryKindOf(s) != mesh.MemoryDevice }
