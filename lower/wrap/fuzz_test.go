package wrap_test

import (
	"errors"
	"testing"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
)

// FuzzWrap wraps any text with nArgs argument and nResults result shardings (replicated on
// a 4x2 mesh, or left open), with Shardy or GSPMD. Module never panics; an error wraps ErrModule
// or is an *OpError; a wrapped module scans cleanly and passes the module checker (but for
// shardings inside it written for another partition count); with GSPMD, wrapping the result
// again changes nothing.
func FuzzWrap(f *testing.F) {
	for _, s := range []string{jaxExported, bareModule, trickyModule,
		"module {\n  func.func @main() {\n    return\n  }\n}\n",
		"module @m {\n  func.func public @main(%a: tensor<2xf32>, %b: tensor<f32> {x = \"y\"}) -> tensor<2xf32> attributes {z} {\n  }\n}\n"} {
		f.Add(s, uint8(1), uint8(1), false)
		f.Add(s, uint8(2), uint8(1), true)
	}
	f.Fuzz(func(t *testing.T, text string, nArgs, nResults uint8, gspmd bool) {
		shardings := func(n uint8) []mesh.NamedSharding {
			out := make([]mesh.NamedSharding, n%4)
			for i := range out {
				if i%2 == 0 {
					out[i] = ns()
				}
			}
			return out
		}
		var opts []wrap.Option
		if gspmd {
			opts = append(opts, wrap.WithPartitioner(lower.GSPMD))
		}
		args, results := shardings(nArgs), shardings(nResults)
		p, err := wrap.Module(text, args, results, opts...)
		if err != nil {
			var oe *lower.OpError
			if !errors.Is(err, wrap.ErrModule) && !errors.As(err, &oe) {
				t.Fatalf("error neither ErrModule nor *lower.OpError: %v", err)
			}
			return
		}
		out := p.Text()
		s := mlir.NewScanner(out)
		for s.Next().Kind != mlir.EOF {
		}
		if err := s.Err(); err != nil {
			t.Fatalf("wrapped text does not scan: %v\n%s", err, out)
		}
		if err := mlir.Check(out); err != nil && !errors.Is(err, mlir.ErrSharding) {
			t.Fatalf("wrapped text fails the checker: %v\n%s", err, out)
		}
		if gspmd {
			p2, err := wrap.Module(out, args, results, opts...)
			if err != nil {
				t.Fatalf("wrapping again: %v\n%s", err, out)
			}
			if p2.Text() != out {
				t.Fatalf("wrapping again changed the text:\n%s\nthen\n%s", out, p2.Text())
			}
		}
	})
}

// FuzzWrapReplace re-shards any text (ReplaceShardings, or reads it with KeepShardings) onto
// the 4x2 mesh, with Shardy or GSPMD. Module never panics; an error wraps ErrModule or is an
// *OpError; a re-sharded module scans cleanly and passes the module checker (but for GSPMD
// shardings inside it), and re-sharding it again changes nothing; KeepShardings returns the
// text unchanged.
func FuzzWrapReplace(f *testing.F) {
	for _, s := range []string{shardyExported, gspmdExported, roundTripExported, shardMapExported, jaxExported, trickyModule} {
		f.Add(s, uint8(2), uint8(2), false, false)
		f.Add(s, uint8(2), uint8(2), true, false)
		f.Add(s, uint8(1), uint8(1), false, true)
	}
	f.Fuzz(func(t *testing.T, text string, nArgs, nResults uint8, gspmd, keep bool) {
		shardings := func(n uint8) []mesh.NamedSharding {
			out := make([]mesh.NamedSharding, n%4)
			for i := range out {
				if i%2 == 0 {
					out[i] = ns("x")
				}
			}
			return out
		}
		opts := []wrap.Option{wrap.ReplaceShardings()}
		if gspmd {
			opts = append(opts, wrap.WithPartitioner(lower.GSPMD))
		}
		args, results := shardings(nArgs), shardings(nResults)
		if keep {
			opts, args, results = []wrap.Option{wrap.KeepShardings()}, nil, nil
		}
		p, err := wrap.Module(text, args, results, opts...)
		if err != nil {
			var oe *lower.OpError
			if !errors.Is(err, wrap.ErrModule) && !errors.As(err, &oe) {
				t.Fatalf("error neither ErrModule nor *lower.OpError: %v", err)
			}
			return
		}
		out := p.Text()
		if keep {
			if out != text {
				t.Fatalf("KeepShardings changed the text")
			}
			return
		}
		s := mlir.NewScanner(out)
		for s.Next().Kind != mlir.EOF {
		}
		if err := s.Err(); err != nil {
			t.Fatalf("re-sharded text does not scan: %v\n%s", err, out)
		}
		if err := mlir.Check(out); err != nil && !errors.Is(err, mlir.ErrSharding) {
			t.Fatalf("re-sharded text fails the checker: %v\n%s", err, out)
		}
		p2, err := wrap.Module(out, args, results, opts...)
		if err != nil {
			t.Fatalf("re-sharding again: %v\n%s", err, out)
		}
		if p2.Text() != out {
			t.Fatalf("re-sharding again changed the text:\n%s\nthen\n%s", out, p2.Text())
		}
	})
}
