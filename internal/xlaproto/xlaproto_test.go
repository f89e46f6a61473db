package xlaproto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestIota(t *testing.T) {
	got, err := Iota([]int{8}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, got)
	got, err = Iota([]int{4, 2}, []int{1, 0}) // <=[4,2]T(1,0)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, got)
	got, err = Iota([]int{2, 2, 2}, []int{2, 0, 1})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, got)
	for _, c := range []struct{ reshape, perm []int }{
		{[]int{2, 2}, []int{0}},                 // transpose of the wrong rank
		{[]int{2, 2}, []int{0, 2}},              // out of range
		{[]int{-1, 2}, nil},                     // negative
		{[]int{1 << 12, 1 << 12, 2}, nil},       // more than maxIotaDevices
		{[]int{1 << 40, 1 << 40, 1 << 40}, nil}, // overflows int64 unchecked
	} {
		_, err := Iota(c.reshape, c.perm)
		assert.ErrorIs(t, err, ErrMalformed, "%v %v", c.reshape, c.perm)
	}
}

func TestParseOpSharding(t *testing.T) {
	// {devices=[4,2]<=[4,2]T(1,0) last_tile_dim_replicate shard_like 3}, with a fixed-width field
	// (metadata would be bytes; a fixed32 is skipped all the same).
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(Tiled))
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{4, 2})
	b = protowire.AppendTag(b, 9, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{4, 2})
	b = protowire.AppendTag(b, 10, protowire.VarintType) // unpacked elements
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 10, protowire.VarintType)
	b = protowire.AppendVarint(b, 0)
	b = protowire.AppendTag(b, 6, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 7, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 99)
	for _, kv := range [][2]uint64{{11, 1}, {12, 3}, {13, 1}} {
		b = protowire.AppendTag(b, protowire.Number(kv[0]), protowire.VarintType)
		b = protowire.AppendVarint(b, kv[1])
	}
	s, err := ParseOpSharding(b)
	require.NoError(t, err)
	assert.Equal(t, Tiled, s.Type())
	assert.Equal(t, []int{4, 2}, s.TileDims())
	reshape, perm := s.Iota()
	assert.Equal(t, []int{4, 2}, reshape)
	assert.Equal(t, []int{1, 0}, perm)
	assert.Nil(t, s.Devices())
	assert.True(t, s.ReplicateOnLastTileDim())
	id, kind, ok := s.ShardGroup()
	assert.True(t, ok)
	assert.Equal(t, int64(3), id)
	assert.Equal(t, ShardLike, kind)
	devices, err := s.Assignment()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, devices)
	assert.Equal(t, "{devices=[4,2]<=[4,2]T(1,0) last_tile_dim_replicate shard_like 3}", s.String())

	for name, bad := range map[string][]byte{
		"a tag without its value": {0x08},
		"a truncated length":      {0x1a, 0x05, 0x01},
		"a bytes-typed type":      {0x0a, 0x00},
		"a varint tuple":          {0x28, 0x01},
	} {
		_, err := ParseOpSharding(bad)
		assert.ErrorIs(t, err, ErrMalformed, name)
	}
}

func TestField(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("first"))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("second"))
	got, err := Field(b, 2)
	require.NoError(t, err)
	assert.Equal(t, "first", string(got))
	got, err = Field(b, 3)
	require.NoError(t, err)
	assert.Nil(t, got)
	_, err = Field(b[:len(b)-1], 2)
	assert.ErrorIs(t, err, ErrMalformed)
}
