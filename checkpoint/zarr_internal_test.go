package checkpoint

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestJAXChunkShape: the chunk shapes JAX 0.12's tensorstore_impl._compute_chunk_shape gives
// (printed by it for these shards).
func TestJAXChunkShape(t *testing.T) {
	for _, tc := range []struct {
		local []int
		elem  int
		want  []int
	}{
		{[]int{65536, 65536}, 4, []int{8192, 65536}},
		{[]int{3, 1 << 30}, 4, []int{3, 134217728}},
		{[]int{1 << 31}, 1, []int{1 << 31}},
		{[]int{7, 11, 13631488}, 2, []int{7, 11, 13631488}},
		{[]int{4, 8}, 4, []int{4, 8}},
		{[]int{0, 5}, 4, []int{1, 5}},
		{[]int{}, 4, []int{}},
		{[]int{97 * 1024 * 1024 * 9}, 4, []int{457703424}},
		{[]int{5, 1 << 29}, 4, []int{5, 67108864}},
		{[]int{2, 3, 5, 7, 1 << 26}, 4, []int{2, 3, 5, 7, 2097152}},
		{[]int{1 << 33}, 1, []int{2147483648}},
		{[]int{6, 1 << 30}, 8, []int{3, 67108864}},
		{[]int{1, 1, 1 << 32}, 1, []int{1, 1, 2147483648}}, // JAX raises IndexError here
	} {
		assert.Equal(t, tc.want, jaxChunkShape(tc.local, tc.elem), "%v x %d bytes", tc.local, tc.elem)
	}
}
