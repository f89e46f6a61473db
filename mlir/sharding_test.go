package mlir

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckShardingValid(t *testing.T) {
	for _, s := range []string{
		"{replicated}", "{manual}", "{unknown}", "{unreduced}", "{maximal device=3}",
		"{devices=[4,2]0,1,2,3,4,5,6,7}", "{devices=[4,2]<=[8]}", "{devices=[4,2]<=[2,4]T(1,0)}",
		"{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
		"{devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}",
		"{devices=[2,4]<=[8] shard_as 1}", "{devices=[2,4]<=[8] shard_like 0}",
		`{devices=[2,4]<=[8] metadata={op_name="a{b}\"c" source_file="x.py"}}`,
		"{replicated metadata={op_name=\"x\"}}", "{{replicated}, {devices=[8]<=[8]}}", "{}",
		" { devices = [ 8 ] <= [ 8 ] } ",
	} {
		if err := CheckSharding(s, 8); err != nil {
			t.Errorf("CheckSharding(%q): %v", s, err)
		}
	}
	if err := CheckSharding("{devices=[2,2]<=[4]}", 0); err != nil {
		t.Errorf("unknown partitions: %v", err)
	}
}

func TestCheckShardingInvalid(t *testing.T) {
	tests := []struct{ s, msg string }{
		{"garbage", `at byte 0: expected "{", found "garbage"`},
		{"{bogus}", `unexpected "bogus" in sharding`},
		{"{replicated", "expected '}' to end the sharding"},
		{"{replicated} x", `unexpected "x" after the sharding`},
		{"{replicated device=1}", "replicated shardings should not have any devices assigned"},
		{"{manual devices=[8]<=[8]}", "manual shardings should not have any devices assigned"},
		{"{maximal}", "maximal shardings should have exactly one device assigned"},
		{"{maximal device=9}", "device 9 out of range for 8 partitions"},
		{"{maximal device=-1}", "device -1 out of range"},
		{"{maximal device=8}", "device 8 out of range for 8 partitions"}, // exactly the partition count
		{"{devices=[4,2]0,1,2,3,4,5,6,8}", "device 8 out of range [0, 8)"},
		{"{devices=[2,1]0,1}", "tile assignment [2 1] has 2 devices, for 8 partitions"},
		{"{devices=[4,2]0,1,2}", "needs 8 devices, got 3"},
		{"{devices=[4,2]0,1,2,3,4,5,6,7,8,9}", "needs 8 devices, got 10"},
		{"{devices=[4,2]0,0,1,2,3,4,5,6}", "device 0 appears twice"},
		{"{devices=[4,2]0,1,2,3,4,5,6,99}", "device 99 out of range [0, 8)"},
		{"{devices=[0,2]<=[8]}", "tile assignment dimension 0 is 0, want >= 1"},
		{"{devices=[-1,-8]<=[8]}", "tile assignment dimension 0 is -1"},
		{"{devices=[65536,65536]<=[8]}", "more than 2147483647 devices"},
		{"{devices=[4,2]<=[2,4]T(1,1)}", "T[1 1] is not a permutation of 0..1"},
		{"{devices=[4,2]<=[2,4]T(1)}", "T[1] has 1 entries for iota reshape [2 4]"},
		{"{devices=[4,2]<=[2,4]T(0,5)}", "not a permutation"},
		{"{devices=[4,2]<=[4,2]}", "expected 'T(' after an iota tile assignment of rank 2"},
		{"{devices=[8]<=[8]T(0)}", `unexpected "T" in sharding`},
		{"{devices=[4,2]<=[16]}", "iota reshape [16] has 16 devices, tile assignment [4 2] has 8"},
		{"{devices=[2,2,2]<=[8] last_tile_dim_replicate last_tile_dims={replicated}}", "last_tile_dim_replicate and last_tile_dims together"},
		{"{devices=[8]<=[8] last_tile_dims={manual, replicated}}", "2 subgroup types for 1 tile dimensions"},
		{"{devices=[2,4]<=[8] last_tile_dims={maximal}}", "unknown subgroup type"},
		{"{devices=[2,4]<=[8] colour=red}", `unknown attribute "colour" in sharding`},
		{"{devices=[2,4]<=[8] metadata={op_name=\"x\"}", "expected '}' to end the sharding"},
		{"{devices=[2,4]<=[8] metadata={op_name=\"x}", "metadata is never closed"},
		{"{devices=[99999999999999999999]<=[8]}", "expected an integer"},
		{"{mesh['a'=2], [{'a'}]}", "the named sharding form is not supported"},
		{"{{replicated}, garbage}", `expected "{", found "garbage"`},
	}
	for _, tc := range tests {
		err := CheckSharding(tc.s, 8)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrSharding) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("CheckSharding(%q) = %v, want ErrSharding with %q", tc.s, err, tc.msg)
		}
	}
}
