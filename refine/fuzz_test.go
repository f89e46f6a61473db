package refine_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

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
	f.Add(strings.Replace(poly, "dimension = 0 : i64", "dimension = 7 : i64", 1), 2, 4)
	f.Add(strings.Replace(poly, "iota_dimension = 0", "iota_dimension = 9", 1), 1, 4)
	f.Add(strings.Replace(poly, "window_dimensions = array<i64: 2, 1>", "window_dimensions = array<i64: 0>", 1), 5, 4)
	f.Fuzz(func(t *testing.T, text string, b, c int) {
		if b < 0 || b > 64 || c < 0 || c > 64 {
			return
		}
		out, err := refine.Module(text, []shapes.Shape{shapes.Make(dtypes.Float32, b, c)})
		if err == nil && (strings.Contains(out, "<?") || strings.Contains(out, "x?")) {
			t.Fatalf("a refined module with dynamic dimensions:\n%s", out)
		}
		_, _, _, _ = refine.Signature(text)
		_ = refine.Polymorphic(text)
	})
}
