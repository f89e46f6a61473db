package xlaproto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// must returns s, failing t on err.
func must(t *testing.T) func(OpSharding, error) OpSharding {
	return func(s OpSharding, err error) OpSharding {
		t.Helper()
		require.NoError(t, err)
		return s
	}
}

// TestOpShardingString: the text of each kind, as XLA's HloSharding::ToString prints it.
func TestOpShardingString(t *testing.T) {
	tests := []struct {
		name string
		s    OpSharding
		want string
	}{
		{"zero", OpSharding{}, "{replicated}"},
		{"replicated", NewReplicated(), "{replicated}"},
		{"manual", NewManual(), "{manual}"},
		{"maximal", must(t)(NewMaximal(3)), "{maximal device=3}"},
		{"iota", must(t)(NewIotaTiled([]int{4, 2}, []int{8}, nil)), "{devices=[4,2]<=[8]}"},
		{"iota identity canonical", must(t)(NewIotaTiled([]int{4, 2}, []int{4, 2}, []int{0, 1})), "{devices=[4,2]<=[8]}"},
		{"iota transposed", must(t)(NewIotaTiled([]int{2, 4}, []int{4, 2}, []int{1, 0})), "{devices=[2,4]<=[4,2]T(1,0)}"},
		{"iota merged", must(t)(NewIotaTiled([]int{2, 4}, []int{2, 2, 2}, []int{2, 0, 1})), "{devices=[2,4]<=[4,2]T(1,0)}"},
		{"explicit", must(t)(NewTiled([]int{4, 2}, []int{0, 2, 4, 6, 1, 3, 5, 7})), "{devices=[4,2]0,2,4,6,1,3,5,7}"},
		{"replicate last", must(t)(NewIotaTiled([]int{4, 1, 2}, []int{8}, nil, Replicated)), "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"},
		{"manual subgroup", must(t)(NewIotaTiled([]int{2, 4}, []int{4, 2}, []int{1, 0}, Manual)), "{devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}"},
		{"two subgroups", must(t)(NewIotaTiled([]int{1, 4, 2}, []int{8}, nil, Manual, Replicated)),
			"{devices=[1,4,2]<=[8] last_tile_dims={manual, replicated}}"},
		{"tuple", NewTuple(NewReplicated(), must(t)(NewTiled([]int{2}, []int{1, 0}))), "{{replicated}, {devices=[2]1,0}}"},
		{"empty tuple", NewTuple(), "{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.s.String()) })
	}
}

func TestOpShardingExplicit(t *testing.T) {
	s := NewTuple(must(t)(NewIotaTiled([]int{2, 4}, []int{4, 2}, []int{1, 0})), NewReplicated())
	e, err := s.Explicit()
	require.NoError(t, err)
	assert.Equal(t, "{{devices=[2,4]0,2,4,6,1,3,5,7}, {replicated}}", e.String())
	assert.Equal(t, "{{devices=[2,4]<=[4,2]T(1,0)}, {replicated}}", s.String(), "Explicit changed its receiver")
}

func TestOpShardingErrors(t *testing.T) {
	for name, f := range map[string]func() (OpSharding, error){
		"negative maximal":         func() (OpSharding, error) { return NewMaximal(-1) },
		"tiles and devices":        func() (OpSharding, error) { return NewTiled([]int{4}, []int{0, 1, 2}) },
		"a device twice":           func() (OpSharding, error) { return NewTiled([]int{2}, []int{1, 1}) },
		"a device out of range":    func() (OpSharding, error) { return NewTiled([]int{2}, []int{0, 2}) },
		"a zero tile count":        func() (OpSharding, error) { return NewTiled([]int{0}, nil) },
		"iota of another size":     func() (OpSharding, error) { return NewIotaTiled([]int{4}, []int{8}, nil) },
		"not a permutation":        func() (OpSharding, error) { return NewIotaTiled([]int{4}, []int{2, 2}, []int{0, 0}) },
		"tiled subgroup":           func() (OpSharding, error) { return NewIotaTiled([]int{2, 2}, []int{4}, nil, Tiled) },
		"more subgroups than dims": func() (OpSharding, error) { return NewIotaTiled([]int{4}, []int{4}, nil, Manual, Replicated) },
	} {
		_, err := f()
		assert.ErrorIs(t, err, ErrMalformed, name)
	}
}

// TestParseOpShardingChecks: messages XLA would not make are refused.
func TestParseOpShardingChecks(t *testing.T) {
	msg := func(fields ...[2]uint64) []byte {
		var b []byte
		for _, f := range fields {
			b = protowire.AppendTag(b, protowire.Number(f[0]), protowire.VarintType)
			b = protowire.AppendVarint(b, f[1])
		}
		return b
	}
	tuple := func(depth int) []byte {
		b := msg([2]uint64{1, uint64(Replicated)})
		for range depth {
			outer := msg([2]uint64{1, uint64(Tuple)})
			outer = protowire.AppendTag(outer, 5, protowire.BytesType)
			b = protowire.AppendBytes(outer, b)
		}
		return b
	}
	_, err := ParseOpSharding(tuple(MaxTupleDepth))
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"unknown type":         {msg([2]uint64{1, 9}), "unknown sharding type 9"},
		"maximal of none":      {msg([2]uint64{1, uint64(Maximal)}), "a maximal sharding with devices []"},
		"tiled of none":        {msg([2]uint64{1, uint64(Tiled)}), "a tiled sharding without a tile assignment"},
		"shard group type":     {msg([2]uint64{1, 0}, [2]uint64{11, 1}, [2]uint64{13, 2}), "shard group type 2"},
		"subgroup type":        {msg([2]uint64{1, 0}, [2]uint64{8, 9}), "subgroup type 9 in last_tile_dims"},
		"deep tuple":           {tuple(MaxTupleDepth + 1), "tuple shardings nest deeper than 8"},
		"tiles and one device": {msg([2]uint64{1, uint64(Tiled)}, [2]uint64{3, 2}, [2]uint64{4, 0}), "tile assignment of 1 devices"},
	} {
		_, err := ParseOpSharding(tc.b)
		require.ErrorIs(t, err, ErrMalformed, name)
		assert.ErrorContains(t, err, tc.want, name)
	}
}

func TestCanonicalIota(t *testing.T) {
	tests := []struct {
		reshape, perm []int
		wantR, wantP  []int
	}{
		{[]int{4, 2}, []int{0, 1}, []int{8}, []int{0}},
		{[]int{4, 2}, []int{1, 0}, []int{4, 2}, []int{1, 0}},
		{[]int{2, 2, 2}, []int{0, 1, 2}, []int{8}, []int{0}},
		{[]int{2, 2, 2}, []int{2, 0, 1}, []int{4, 2}, []int{1, 0}},
		{[]int{2, 2, 2}, []int{1, 0, 2}, []int{2, 2, 2}, []int{1, 0, 2}},
		{[]int{2, 1, 4}, []int{2, 1, 0}, []int{2, 4}, []int{1, 0}},
		{[]int{1, 1}, []int{1, 0}, []int{1}, []int{0}},
		{nil, nil, []int{1}, []int{0}},
	}
	for _, tt := range tests {
		r, p := canonicalIota(tt.reshape, tt.perm)
		assert.Equal(t, tt.wantR, r, "reshape %v perm %v", tt.reshape, tt.perm)
		assert.Equal(t, tt.wantP, p, "reshape %v perm %v", tt.reshape, tt.perm)
	}
}

// FuzzParseOpSharding: no input panics; a message that decodes prints, expands and decodes
// the same again.
func FuzzParseOpSharding(f *testing.F) {
	f.Add([]byte("\x08\x02" + "\x2a\x0c\x08\x03\x1a\x02\x04\x02\x4a\x01\x08\x52\x01\x00" +
		"\x2a\x0e\x08\x03\x1a\x02\x02\x04\x4a\x02\x04\x02\x52\x02\x01\x00"))
	f.Add([]byte{0x08, 0x03, 0x1a, 0x02, 0x02, 0x02, 0x22, 0x02, 0x01, 0x00, 0x30, 0x01})
	f.Add([]byte{0x08, 0x01, 0x22, 0x01, 0x05, 0x58, 0x01, 0x60, 0x02, 0x68, 0x01})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseOpSharding(b)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		text := s.String()
		again, err := ParseOpSharding(b)
		require.NoError(t, err)
		require.Equal(t, text, again.String())
		e, err := s.Explicit()
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		if s.IsTiled() {
			devices, err := s.Assignment()
			require.NoError(t, err)
			require.Equal(t, devices, e.Devices())
		}
	})
}
