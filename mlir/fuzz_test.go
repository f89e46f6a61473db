package mlir

import (
	"errors"
	"strings"
	"testing"
)

// FuzzScanner checks the scanner on any text: it never panics; tokens are the source bytes
// at their offsets, in order, with only whitespace and comments between them; String
// tokens unquote and re-quote to a literal of the same value; an error is an *Error wrapping
// ErrSyntax or ErrNesting, at an offset inside the text.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		"module @m attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <[\"x\"=4]>\n}\n",
		`%0:2 = "stablehlo.case"(%i) ({ ^bb0(%a: tensor<0x2xf32>): "stablehlo.return"(%a) }) : (tensor<i32>) -> tensor<?xf32>`,
		`x = "a\22b\\c\0A" // comment "{ ( <`, "{-# r: {} #-} ... -> 1.5e-3 0x1F !t #a ^b @\"q\"",
		"\"unterminated", "f(]", "a \\ b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s := NewScanner(src)
		last := 0
		for tok := s.Next(); tok.Kind != EOF; tok = s.Next() {
			if tok.Off < last || tok.End() > len(src) || src[tok.Off:tok.End()] != tok.Text || tok.Text == "" {
				t.Fatalf("token %v at %d does not match the source", tok, tok.Off)
			}
			if gap := src[last:tok.Off]; SkipSpace(gap, 0) != len(gap) && !strings.HasPrefix(strings.TrimLeft(gap, " \t\r\n"), "//") {
				t.Fatalf("non-space %q skipped before %v", gap, tok)
			}
			last = tok.End()
			if tok.Kind == String {
				v, err := Unquote(tok.Text)
				if err != nil {
					t.Fatalf("Unquote(%s): %v", tok.Text, err)
				}
				if w, err := Unquote(Quote(v)); err != nil || w != v {
					t.Fatalf("re-quote of %q: %q, %v", v, w, err)
				}
			}
			if tok.Kind == AtIdent {
				if _, err := tok.Symbol(); err != nil {
					t.Fatalf("Symbol(%s): %v", tok.Text, err)
				}
			}
		}
		if err := s.Err(); err != nil {
			var e *Error
			if !errors.As(err, &e) || !(errors.Is(err, ErrSyntax) || errors.Is(err, ErrNesting)) || e.Off < 0 || e.Off > len(src) {
				t.Fatalf("error %#v", err)
			}
		} else if s.Depth() != 0 {
			t.Fatalf("no error but depth %d at the end", s.Depth())
		}
	})
}

// FuzzCheck checks the module checker on any text: it never panics, returns the same answer
// twice, and every error is an *Error with one of the package's sentinels and a position
// that matches its offset.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		module(`  sdy.mesh @mesh = <["x"=4, "y"=2]>`+"\n", `%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}`, goodBody),
		module("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}`, goodBody),
		module(`  func.func private @f(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %0 = func.call @f(%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
`, arg, goodBody),
		module("", "%t: tensor<4611686018427387904xf32>", goodBody),
		module("", arg, "    %0 = stablehlo.custom_call @xla_python_cpu_callback(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+goodBody),
		nestedRegions(3),
		manualModule(shmapBody, toManual+"    %2 = call @shmap_body(%1) : (tensor<1x2xf32>) -> tensor<1x2xf32>\n"+fromManual("%2")),
		manualModule("", "    %0 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"Sharding\"}> {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
	} {
		f.Add(s, 8)
	}
	sentinels := []error{ErrSyntax, ErrNesting, ErrName, ErrRecursion, ErrTensorSize, ErrPartitions, ErrSharding, ErrUnsupportedOp}
	f.Fuzz(func(t *testing.T, text string, n int) {
		err := Check(text, Partitions(n))
		if err2 := Check(text, Partitions(n)); (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("two answers: %v / %v", err, err2)
		}
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("not an *Error: %#v", err)
		}
		known := false
		for _, s := range sentinels {
			known = known || errors.Is(err, s)
		}
		if !known {
			t.Fatalf("unknown kind: %v", err)
		}
		if e.Off >= 0 {
			if l, c := Position(text, e.Off); l != e.Line || c != e.Col {
				t.Fatalf("%v: offset %d is %d:%d", err, e.Off, l, c)
			}
		}
	})
}

// FuzzCheckSharding: the HloSharding reader never panics and reports only ErrSharding.
func FuzzCheckSharding(f *testing.F) {
	for _, s := range []string{"{replicated}", "{devices=[4,2]<=[2,4]T(1,0) last_tile_dims={manual}}", "{maximal device=1}",
		"{{replicated}, {devices=[2]0,1 metadata={op_name=\"x\"}}}", "{devices=[2,2]0,1,2,3 shard_as 2}"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if err := CheckSharding(s, n); err != nil && !errors.Is(err, ErrSharding) {
			t.Fatalf("%q: %v", s, err)
		}
	})
}
