package gradcheck

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// gradcheck is the oracle of every autodiff rule test: if its comparison broke, every
// gradient would pass. These tests plant wrong and NaN gradients and require each to fail.

func TestOff(t *testing.T) {
	c := config{eps: 1e-6, rtol: 1e-6, atol: 1e-6}
	nan := math.NaN()
	tests := []struct {
		got, num float64
		want     bool
	}{
		{1, 1, false},
		{1 + 5e-7, 1, false},    // within atol + rtol
		{1 + 3e-6, 1, true},     // outside
		{-2, 2, true},           // wrong sign
		{0, 1e-3, true},         // a dropped gradient
		{nan, 1, true},          // a NaN gradient against any finite difference
		{nan, nan, true},        // even where finite differences are NaN too
		{math.Inf(1), 1, true},  // an infinite gradient
		{1, math.Inf(1), true},  // against an infinite difference
		{1e6, 1e6 + 0.5, false}, // relative tolerance
		{1e6, 1e6 + 3, true},
	}
	for _, tt := range tests {
		if got := c.off(tt.got, tt.num); got != tt.want {
			t.Errorf("off(%v, %v) = %v, want %v", tt.got, tt.num, got, tt.want)
		}
	}
}

// TestCheckAgrees: the exact gradient of x^3 passes.
func TestCheckAgrees(t *testing.T) {
	c := pjrttest.Client(t)
	cube := func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Sum(f.Mul(a[0], f.Mul(a[0], a[0])))
	}
	if err := Check(c, cube, []Input{F64([]float64{0.5, -1.25, 2}, 3)}, Eps(1e-4), Tolerance(1e-6, 1e-6)); err != nil {
		t.Fatal(err)
	}
}

// TestCheckWrongGradient: with a step of 0.5 the finite difference of x^3 at 1 is
// ((1.5)^3 - (0.5)^3) / 1 = 3.25, not autodiff's 3, so Check must report exactly that
// element.
func TestCheckWrongGradient(t *testing.T) {
	c := pjrttest.Client(t)
	cube := func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Sum(f.Mul(a[0], f.Mul(a[0], a[0])))
	}
	err := Check(c, cube, []Input{F64([]float64{1}, 1)}, Eps(0.5))
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("err = %v, want ErrMismatch", err)
	}
	if want := "input 0 element 0: autodiff 3, finite differences 3.25"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
}

// TestCheckNaNGradient: sqrt at -1 has a NaN gradient (and makes the loss, so every finite
// difference, NaN); a NaN gradient never passes, nor does a gradient that a NaN finite
// difference cannot vouch for.
func TestCheckNaNGradient(t *testing.T) {
	c := pjrttest.Client(t)
	root := func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Sum(f.Sqrt(a[0])) }
	err := Check(c, root, []Input{F64([]float64{4, -1}, 2)}, Eps(1e-4), Tolerance(1e-4, 1e-6))
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("err = %v, want ErrMismatch", err)
	}
	want := "gradcheck: gradient differs from finite differences:\n" +
		"input 0 element 0: autodiff 0.25, finite differences NaN\n" +
		"input 0 element 1: autodiff NaN, finite differences NaN"
	if err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}
