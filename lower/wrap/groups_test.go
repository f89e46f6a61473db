package wrap

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/shardy"
)

func testMesh(sizes ...int) shardy.Mesh {
	names := []string{"x", "y", "z"}
	axes := make([]shardy.MeshAxis, len(sizes))
	for i, s := range sizes {
		axes[i] = shardy.MeshAxis{Name: names[i], Size: s}
	}
	return shardy.NewMesh(axes, nil)
}

func TestRegroupSite(t *testing.T) {
	tests := []struct {
		name     string
		key      string
		src      string
		old, new shardy.Mesh
		want     string
	}{
		{"x of 4x2 onto 4x1", "replica_groups", "dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>",
			testMesh(4, 2), testMesh(4, 1), "dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>"},
		{"x of 2x4 onto 2x2", "replica_groups", "dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>",
			testMesh(2, 4), testMesh(2, 2), "dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>"},
		{"x of 2x4 onto 2x8", "replica_groups", "dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>",
			testMesh(2, 4), testMesh(2, 8), "dense<[[0, 8], [1, 9], [2, 10], [3, 11], [4, 12], [5, 13], [6, 14], [7, 15]]> : tensor<8x2xi64>"},
		{"z then x of 2x2x2 onto 2x1x2", "replica_groups", "dense<[[0, 4, 1, 5], [2, 6, 3, 7]]> : tensor<2x4xi64>",
			testMesh(2, 2, 2), testMesh(2, 1, 2), "dense<[[0, 2, 1, 3]]> : tensor<1x4xi64>"},
		{"hex", "replica_groups", `dense<"0x0000000000000000020000000000000001000000000000000300000000000000"> : tensor<2x2xi64>`,
			testMesh(2, 2), testMesh(2, 1), "dense<[[0, 1]]> : tensor<1x2xi64>"},
		{"ring over x of 4x2 onto 4x1", "source_target_pairs", "dense<[[0, 2], [2, 4], [4, 6], [6, 0], [1, 3], [3, 5], [5, 7], [7, 1]]> : tensor<8x2xi64>",
			testMesh(4, 2), testMesh(4, 1), "dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>"},
		{"shift over x of 2x4 onto 2x2", "source_target_pairs", "dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>",
			testMesh(2, 4), testMesh(2, 2), "dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := regroupSite("stablehlo.all_reduce", tc.key, tc.src, tc.old, tc.new)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRegroupSiteErrors(t *testing.T) {
	tests := []struct {
		name, key, src string
		msg            string
	}{
		{"not the groups of axes", "replica_groups", "dense<[[0, 3], [1, 2], [4, 7], [5, 6]]> : tensor<4x2xi64>", "are not the groups of any mesh axes"},
		{"spans a changing axis", "replica_groups", "dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>", `spans mesh axis "y", whose size changes from 2 to 1`},
		{"uneven pairs", "source_target_pairs", "dense<[[0, 2], [3, 5]]> : tensor<2x2xi64>", "do not repeat one permutation"},
		{"not a dense attribute", "replica_groups", "array<i64: 0, 1>", "not a dense attribute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := regroupSite("stablehlo.all_gather", tc.key, tc.src, testMesh(4, 2), testMesh(4, 1))
			require.Error(t, err)
			require.ErrorContains(t, err, "stablehlo.all_gather")
			require.ErrorContains(t, err, tc.msg)
			if tc.name != "not a dense attribute" {
				require.True(t, errors.Is(err, lower.ErrMeshMismatch), "%v", err)
			}
		})
	}
}
