// Package reftest holds the inputs and the plain-Go reference results that the integration
// tests of several packages (stablehlo, lower) compare XLA's output with. It imports no
// xlamesh package, so any package's tests may use it.
package reftest

// SmallFloats returns n small floats, -5 to 7 repeating: exact in every float type, with
// negative, zero and positive values.
func SmallFloats(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i%13) - 5
	}
	return out
}

// MatMul multiplies a [m,k] by b [k,n], both row-major, summing in index order.
func MatMul(a, b []float32, m, k, n int) []float32 {
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float32
			for l := range k {
				s += a[i*k+l] * b[l*n+j]
			}
			out[i*n+j] = s
		}
	}
	return out
}
