package lower_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/lower"
)

// buildLarge lowers and prints a program of about n ops: elementwise math on a sharded
// 1024x512 array with a sharding constraint every 100 ops and a reduction at the end.
func buildLarge(n int) (*lower.Program, error) {
	m := lower.NewModule("large")
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 1024, 512), ns("x", "y"))
	y := x
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			y = f.Add(y, x)
		case 1:
			y = f.Mul(y, f.Constant(0.5)) // a constant and a multiply
			i++
		case 2:
			y = f.Tanh(y)
		case 3:
			y = f.Max(y, x)
		case 4:
			if i%100 == 4 {
				y = f.ShardingConstraint(y, ns("x"))
			} else {
				y = f.Sub(y, x)
			}
		}
	}
	f.Return(f.Sum(y, 1))
	f.ShardResults(ns("x"))
	return m.Build()
}

// BenchmarkLower5000 measures building and printing a 5,000-op module.
func BenchmarkLower5000(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildLarge(5000); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLargeProgram(t *testing.T) {
	p, err := buildLarge(5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Text()) < 5000*50 {
		t.Fatalf("text too short: %d bytes", len(p.Text()))
	}
}
