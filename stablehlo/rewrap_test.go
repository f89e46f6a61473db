package stablehlo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestRewrapResults: ops added by RewrapResults come after the body and before the return,
// which returns what wrap gave; the results keep their attributes.
func TestRewrapResults(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
	f.Return(f.Neg(x), x)
	f.SetResultAttr(1, "a.b", `"c"`)
	var seen []int
	f.RewrapResults(func(i int, v stablehlo.Value) stablehlo.Value {
		seen = append(seen, i)
		if i == 0 {
			return v // unchanged
		}
		return f.CustomCall("mark", []stablehlo.Value{v}, []stablehlo.Shape{v.Shape()})[0]
	})
	text, err := m.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := `  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32> {a.b = "c"}) {
    %0 = "stablehlo.negate"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @mark(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }`
	if !strings.Contains(text, want) || len(seen) != 2 {
		t.Errorf("rewrapped module (wrap saw %v):\n%s\nwant it to hold:\n%s", seen, text, want)
	}
}

func TestRewrapResultsErrors(t *testing.T) {
	f32 := stablehlo.NewShape(dtypes.Float32, 4)
	tests := map[string]func(m *stablehlo.Module){
		"before return": func(m *stablehlo.Module) {
			f := m.Main()
			f.Arg(f32)
			f.RewrapResults(func(_ int, v stablehlo.Value) stablehlo.Value { return v })
		},
		"another shape": func(m *stablehlo.Module) {
			f := m.Main()
			x := f.Arg(f32)
			f.Return(x)
			f.RewrapResults(func(_ int, v stablehlo.Value) stablehlo.Value { return f.Reshape(v, 2, 2) })
		},
		"zero value": func(m *stablehlo.Module) {
			f := m.Main()
			x := f.Arg(f32)
			f.Return(x)
			f.RewrapResults(func(int, stablehlo.Value) stablehlo.Value { return stablehlo.Value{} })
		},
	}
	for name, build := range tests {
		t.Run(name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			build(m)
			if _, err := m.Build(); !errors.Is(err, stablehlo.ErrFunction) && !errors.Is(err, stablehlo.ErrInvalidValue) {
				t.Errorf("Build error = %v, want ErrFunction or ErrInvalidValue", err)
			}
		})
	}
}

// TestCallWith: the call's attributes are printed in its dictionary.
func TestCallWith(t *testing.T) {
	m := stablehlo.NewModule("m")
	g := m.Func("g")
	gx := g.Arg(stablehlo.NewShape(dtypes.Float32, 2))
	g.Return(g.Neg(gx))
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 2))
	f.Return(f.CallWith(g, []stablehlo.Attr{{Name: "mhlo.frontend_attributes", Value: `{k = "v"}`}}, x)...)
	text, err := m.Build()
	if err != nil {
		t.Fatal(err)
	}
	if want := `%0 = func.call @g(%arg0) {mhlo.frontend_attributes = {k = "v"}} : (tensor<2xf32>) -> tensor<2xf32>`; !strings.Contains(text, want) {
		t.Errorf("module:\n%s\nwant %s", text, want)
	}
}
