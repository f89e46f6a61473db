package lower_test

import (
	"reflect"
	"testing"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestBuilderTypesReachableFromLower: every type of package stablehlo that a builder method
// takes or returns (an options struct, dimension numbers, an enum) has an alias in lower, so a
// Body written with lower never imports stablehlo for it. A new such type fails this test
// until lower has its alias (and this list names it).
func TestBuilderTypesReachableFromLower(t *testing.T) {
	aliases := map[reflect.Type]bool{}
	for _, ty := range []reflect.Type{
		reflect.TypeFor[lower.Value](), reflect.TypeFor[lower.Shape](), reflect.TypeFor[lower.DType](),
		reflect.TypeFor[lower.DotDims](), reflect.TypeFor[lower.Reduction](), reflect.TypeFor[lower.Comparison](),
		reflect.TypeFor[lower.ScanOptions](), reflect.TypeFor[lower.ConvParams](),
		reflect.TypeFor[lower.ConvDims](), reflect.TypeFor[lower.GatherParams](), reflect.TypeFor[lower.GatherDims](),
		reflect.TypeFor[lower.ScatterParams](), reflect.TypeFor[lower.ScatterDims](), reflect.TypeFor[lower.ReduceWindowParams](),
		reflect.TypeFor[lower.Padding](), reflect.TypeFor[lower.FFTType](), reflect.TypeFor[lower.RngAlgorithm](),
		reflect.TypeFor[lower.MeshAxes](), reflect.TypeFor[lower.SelectAndScatterParams](), reflect.TypeFor[lower.Attr](),
	} {
		aliases[ty] = true
	}
	pkg := reflect.TypeFor[stablehlo.Function]().PkgPath()
	// The builder's own types, which lower wraps rather than aliases, and OpSpec, the
	// extension point of new ops (AddOp), which belongs to stablehlo.
	own := map[reflect.Type]bool{
		reflect.TypeFor[stablehlo.Function](): true, reflect.TypeFor[stablehlo.Module](): true,
		reflect.TypeFor[stablehlo.Op](): true, reflect.TypeFor[stablehlo.OpSpec](): true,
	}
	var visit func(ty reflect.Type, where string)
	visit = func(ty reflect.Type, where string) {
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			visit(ty.Elem(), where)
			return
		case reflect.Func:
			for i := range ty.NumIn() {
				visit(ty.In(i), where)
			}
			for i := range ty.NumOut() {
				visit(ty.Out(i), where)
			}
			return
		}
		if ty.PkgPath() == pkg && !own[ty] && !aliases[ty] {
			t.Errorf("stablehlo.%s (in %s) has no alias in package lower", ty.Name(), where)
		}
	}
	fn := reflect.TypeFor[*stablehlo.Function]()
	for i := range fn.NumMethod() {
		m := fn.Method(i)
		visit(m.Type, "Function."+m.Name)
	}
}
