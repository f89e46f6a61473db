package mesh

import (
	"slices"
	"testing"
)

// TestPrimeFactors: the mutation run's one survivor in mesh (p*p <= x loosened to p*p < x)
// showed no test factored a square of a prime, where the loop must still try p = sqrt(x).
func TestPrimeFactors(t *testing.T) {
	for _, tc := range []struct {
		x    int
		want []int
	}{
		{1, nil}, {2, []int{2}}, {4, []int{2, 2}}, {8, []int{2, 2, 2}}, {9, []int{3, 3}},
		{12, []int{2, 2, 3}}, {25, []int{5, 5}}, {49, []int{7, 7}}, {97, []int{97}}, {1024, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
	} {
		if got := primeFactors(tc.x); !slices.Equal(got, tc.want) {
			t.Errorf("primeFactors(%d) = %v, want %v", tc.x, got, tc.want)
		}
	}
}
