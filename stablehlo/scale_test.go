package stablehlo

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
)

// The growth tests of issue 31: each runs a hot path at two device counts and compares the
// work it did (idSet lookups), not the time it took, so a loaded machine cannot fail them and
// a quadratic check cannot pass them. Linear or N·log N work grows by at most 16×1.5 = 24 from
// 512 to 8,192 ids; a quadratic one by 256.

// maxGrowth is the most the work may grow from scaleSmall to scaleLarge ids.
const (
	scaleSmall = 512
	scaleLarge = 8192
	maxGrowth  = 24
)

// probesOf returns the idSet lookups op makes.
func probesOf(op func()) int64 {
	before := idProbes.Load()
	op()
	return idProbes.Load() - before
}

// scaleGroups returns n ids in groups of 8: [[0..7], [8..15], ...], transposed so that the
// ids of a group are n/8 apart, as for a psum over the major axis.
func scaleGroups(n int) [][]int {
	groups := make([][]int, n/8)
	for i := range groups {
		groups[i] = make([]int, 8)
		for j := range groups[i] {
			groups[i][j] = j*(n/8) + i
		}
	}
	return groups
}

func checkGrowth(t *testing.T, what string, work func(n int) int64) {
	t.Helper()
	small, large := work(scaleSmall), work(scaleLarge)
	if small <= 0 {
		t.Fatalf("%s: no work counted at %d ids", what, scaleSmall)
	}
	growth := float64(large) / float64(small)
	t.Logf("%s: %d lookups at %d ids, %d at %d: growth %.1f×", what, small, scaleSmall, large, scaleLarge, growth)
	if growth > maxGrowth {
		t.Errorf("%s: work grows %.1f× from %d to %d ids (at most %d×): quadratic?", what, growth, scaleSmall, scaleLarge, maxGrowth)
	}
}

// TestScaleReplicaGroups: ten all-reduces over every partition cost linear work in the
// partition count.
func TestScaleReplicaGroups(t *testing.T) {
	checkGrowth(t, "all_reduce replica groups", func(n int) int64 {
		m := NewModule("scale")
		f := m.Main()
		x := f.Arg(NewShape(dtypes.Float32, 4))
		groups := scaleGroups(n)
		probes := probesOf(func() {
			for range 10 {
				x = f.AllReduce(x, Sum, groups)
			}
		})
		f.Return(x)
		if _, err := m.Build(); err != nil {
			t.Fatal(err)
		}
		return probes
	})
}

// TestScaleCollectivePermute: a ring permutation over n partitions costs linear work.
func TestScaleCollectivePermute(t *testing.T) {
	checkGrowth(t, "collective_permute pairs", func(n int) int64 {
		m := NewModule("scale")
		f := m.Main()
		x := f.Arg(NewShape(dtypes.Float32, 4))
		pairs := make([][2]int, n)
		for i := range pairs {
			pairs[i] = [2]int{i, (i + 1) % n}
		}
		probes := probesOf(func() { x = f.CollectivePermute(x, pairs) })
		f.Return(x)
		if _, err := m.Build(); err != nil {
			t.Fatal(err)
		}
		return probes
	})
}
