package refine_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/refine"
	"github.com/xlamesh/xlamesh/shapes"
)

// FuzzModule feeds Module edited modules and argument shapes: it never panics, and what it
// returns has no dynamic dimension left.
func FuzzModule(f *testing.F) {
	f.Add(poly, 3, 4)
	f.Add(prettyPoly, 3, 4)
	f.Add(strings.Replace(prettyPoly, "%3:3", "%3:2", 1), 3, 4)
	// A custom form broken before its attribute dictionary (the parser goes on after its first
	// error: what it reads then must not be sliced as a whole group).
	f.Add(strings.Replace(prettyPoly, "GE, %0, %c,  SIGNED :", "GE %0 {a = 1} :", 1), 3, 4)
	f.Add(strings.Replace(prettyPoly, "GE, %0, %c,  SIGNED :", "GE, %0, %c {a = [1", 1), 3, 4)
	f.Add(strings.Replace(poly, "dense<4>", "dense<-4>", 1), 2, 4)
	// A dynamic type inside an attribute, which refinement does not read.
	f.Add(strings.Replace(poly, "tensor<1xi32>}>", "tensor<1xi32>}<?xi32>\n>", 1), 3, 4)
	f.Add(strings.Replace(poly, "dimension = 0 : i64", "dimension = 7 : i64", 1), 2, 4)
	f.Add(strings.Replace(poly, "iota_dimension = 0", "iota_dimension = 9", 1), 1, 4)
	f.Add(strings.Replace(poly, "window_dimensions = array<i64: 2, 1>", "window_dimensions = array<i64: 0>", 1), 5, 4)
	f.Fuzz(func(t *testing.T, text string, b, c int) {
		if b < 0 || b > 64 || c < 0 || c > 64 {
			return
		}
		out, err := refine.Module(text, []shapes.Shape{shapes.Make(dtypes.Float32, b, c)})
		if err == nil && hasDynamicDim(out) {
			t.Fatalf("a refined module with dynamic dimensions:\n%s", out)
		}
		_, _, _, _ = refine.Signature(text)
		_ = refine.Polymorphic(text)
	})
}

// hasDynamicDim reports whether text has a "?" token in angle brackets (a dimension of
// tensor<...>); a "?" in a string, or in Shardy's {?}, is not one.
func hasDynamicDim(text string) bool {
	s := mlir.NewScanner(text)
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		if t.Is(mlir.Punct, "?") && s.Depth() > 0 && text[s.Open(s.Depth()-1)] == '<' {
			return true
		}
	}
	return false
}
