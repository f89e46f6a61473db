package linalg_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/internal/optest"
	"github.com/xlamesh/xlamesh/linalg"
	"github.com/xlamesh/xlamesh/stablehlo"
)

var shp = optest.Shape

// TestShapesAndErrors checks the result shapes and the errors of each function; their values
// are checked against JAX by internal/oracletest (TestLinalgBuilderCPUOnly, linalg group).
func TestShapesAndErrors(t *testing.T) {
	f32, f64, c64, i32 := dtypes.Float32, dtypes.Float64, dtypes.Complex64, dtypes.Int32
	one := func(g func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value, i int) func(
		f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return g(f, a)[i] }
	}
	qr := func(complete bool) func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
			q, r := linalg.QR(f, a[0], complete)
			return []stablehlo.Value{q, r}
		}
	}
	svd := func(full bool) func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
			u, s, vh := linalg.SVD(f, a[0], full)
			return []stablehlo.Value{u, s, vh}
		}
	}
	lu := func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		l, p, q := linalg.LU(f, a[0])
		return []stablehlo.Value{l, p, q}
	}
	eigh := func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		w, v := linalg.Eigh(f, a[0])
		return []stablehlo.Value{w, v}
	}
	optest.Run(t, "custom_call", []optest.Case{
		{Name: "cholesky batched", Args: []stablehlo.Shape{shp(f32, 2, 3, 4, 4)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return linalg.Cholesky(f, a[0])
		}, Want: shp(f32, 2, 3, 4, 4)},
		{Name: "cholesky not square", Args: []stablehlo.Shape{shp(f32, 4, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return linalg.Cholesky(f, a[0])
		}, Sentinel: stablehlo.ErrShape, Err: "The input to linalg.cholesky must have shape [..., n, n], got shape (4, 3)"},
		{Name: "cholesky of integers", Args: []stablehlo.Shape{shp(i32, 4, 4)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return linalg.Cholesky(f, a[0])
		}, Sentinel: stablehlo.ErrDType, Err: "linalg.cholesky takes float32, float64, complex64 or complex128 matrices, got int32"},
		{Name: "triangular right side", Args: []stablehlo.Shape{shp(f64, 3, 3), shp(f64, 2, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return linalg.TriangularSolve(f, a[0], a[1], linalg.TriangularOptions{Lower: true})
		}, Want: shp(f64, 2, 3)},
		{Name: "triangular b too short", Args: []stablehlo.Shape{shp(f64, 3, 3), shp(f64, 2, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return linalg.TriangularSolve(f, a[0], a[1], linalg.TriangularOptions{LeftSide: true})
		}, Sentinel: stablehlo.ErrShape, Err: "do not match for a left-side solve"},
		{Name: "lu wide", Args: []stablehlo.Shape{shp(c64, 3, 5)}, Build: one(lu, 0), Want: shp(c64, 3, 5)},
		{Name: "lu pivots", Args: []stablehlo.Shape{shp(f32, 2, 5, 3)}, Build: one(lu, 1), Want: shp(i32, 2, 3)},
		{Name: "lu permutation", Args: []stablehlo.Shape{shp(f32, 2, 5, 3)}, Build: one(lu, 2), Want: shp(i32, 2, 5)},
		{Name: "solve vector", Args: []stablehlo.Shape{shp(f32, 3, 3), shp(f32, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return linalg.Solve(f, a[0], a[1])
		}, Want: shp(f32, 3)},
		{Name: "solve batch mismatch", Args: []stablehlo.Shape{shp(f32, 2, 3, 3), shp(f32, 3, 3, 1)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return linalg.Solve(f, a[0], a[1])
		}, Sentinel: stablehlo.ErrShape, Err: "solve: b of shape (3, 3, 1) does not match a of shape (2, 3, 3)"},
		{Name: "qr reduced tall q", Args: []stablehlo.Shape{shp(f32, 5, 3)}, Build: one(qr(false), 0), Want: shp(f32, 5, 3)},
		{Name: "qr reduced tall r", Args: []stablehlo.Shape{shp(f32, 5, 3)}, Build: one(qr(false), 1), Want: shp(f32, 3, 3)},
		{Name: "qr complete tall q", Args: []stablehlo.Shape{shp(f32, 5, 3)}, Build: one(qr(true), 0), Want: shp(f32, 5, 5)},
		{Name: "qr complete tall r", Args: []stablehlo.Shape{shp(f32, 5, 3)}, Build: one(qr(true), 1), Want: shp(f32, 5, 3)},
		{Name: "qr wide q", Args: []stablehlo.Shape{shp(f32, 3, 5)}, Build: one(qr(false), 0), Want: shp(f32, 3, 3)},
		{Name: "eigh values real", Args: []stablehlo.Shape{shp(c64, 4, 4)}, Build: one(eigh, 0), Want: shp(f32, 4)},
		{Name: "eigh of a vector", Args: []stablehlo.Shape{shp(f32, 4)}, Build: one(eigh, 0),
			Sentinel: stablehlo.ErrShape, Err: "The input to linalg.eigh must have shape [..., n, n], got shape (4,)"},
		{Name: "svd reduced u", Args: []stablehlo.Shape{shp(c64, 2, 5, 3)}, Build: one(svd(false), 0), Want: shp(c64, 2, 5, 3)},
		{Name: "svd values real", Args: []stablehlo.Shape{shp(c64, 2, 5, 3)}, Build: one(svd(false), 1), Want: shp(f32, 2, 3)},
		{Name: "svd full vh", Args: []stablehlo.Shape{shp(f32, 5, 3)}, Build: one(svd(true), 2), Want: shp(f32, 3, 3)},
		{Name: "svd full u", Args: []stablehlo.Shape{shp(f32, 5, 3)}, Build: one(svd(true), 0), Want: shp(f32, 5, 5)},
	})
}

// TestLowering checks the custom call JAX's CPU lowering writes for a batched Cholesky, attribute
// for attribute, as JAX 0.12 printed it for jnp.linalg.cholesky of a 2x4x4 float32 array
// (testdata/oracle/linalg.json, cholesky/float32/batched).
func TestLowering(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	f.Return(linalg.Cholesky(f, f.Arg(shp(dtypes.Float32, 2, 4, 4))))
	text, err := m.Build()
	require.NoError(t, err)
	const jax = `stablehlo.custom_call @lapack_spotrf_ffi(%3) {mhlo.backend_config = {uplo = 76 : ui8}, ` +
		`mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], ` +
		`output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, ` +
		`operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : ` +
		`tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i]) {i=2, j=4, ` +
		`k=4, l=4, m=4}, custom>} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2xi32>)`
	_, after, ok := strings.Cut(jax, "(%3) ")
	require.True(t, ok)
	require.Contains(t, text, after, "the custom call differs from JAX's:\n%s", text)
}

// TestNoGradient: where JAX defines no derivative (the QR of a wide matrix, an SVD with full
// matrices), differentiating is refused with autodiff.ErrNotDifferentiable saying so, not given
// a wrong gradient.
func TestNoGradient(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value
		want  string
	}{
		{"qr wide", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			_, r := linalg.QR(f, x, false)
			return r
		}, "JAX defines it for a QR of m x n matrices with m >= n"},
		{"svd full", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			_, s, _ := linalg.SVD(f, x, true)
			return s
		}, "the gradient of an SVD with full matrices: JAX has none either"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			x := f.Arg(shp(dtypes.Float32, 3, 5))
			loss := f.Sum(tc.build(f, x))
			f.Return(loss, autodiff.Grad(f, loss, x)[0])
			_, err := m.Build()
			require.ErrorIs(t, err, autodiff.ErrNotDifferentiable)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
