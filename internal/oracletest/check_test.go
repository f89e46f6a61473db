package oracletest

import (
	"strconv"
	"testing"

	"github.com/xlamesh/xlamesh/mlir"
)

// TestJAXModulesPassTheChecker: every module JAX 0.8.1 lowered for the oracle passes the
// module checker pjrt.Compile runs, for its own partition count: the checker refuses
// nothing JAX writes.
func TestJAXModulesPassTheChecker(t *testing.T) {
	g := loadGolden[loweringCase](t, "lowering")
	n := 0
	for _, c := range g.Cases {
		if c.ExpectError || c.JAX.StableHLO == "" {
			continue
		}
		mi, err := parseModule(c.JAX.StableHLO)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		partitions, err := strconv.Atoi(mi.NumPartitions)
		if err != nil {
			t.Fatalf("%s: num_partitions %q", c.Name, mi.NumPartitions)
		}
		if err := mlir.Check(c.JAX.StableHLO, mlir.Partitions(partitions)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no JAX modules in the lowering goldens")
	}
}
