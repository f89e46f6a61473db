package pjrt

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestBytesMoved(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		bytes int64
		g     int
		want  int64
	}{
		{"all-reduce", 800, 8, 1400},
		{"all-reduce", 800, 1, 0},
		{"all-gather", 100, 4, 300},
		{"reduce-scatter", 800, 4, 600},
		{"all-to-all", 800, 8, 700},
		{"collective-permute", 64, 0, 64},
		{"collective-broadcast", 64, 4, 64},
		{"all-reduce", 10, 3, 13}, // 2*2*10/3 rounded down
	} {
		assert.Equal(t, tc.want, bytesMoved(tc.kind, tc.bytes, tc.g), "%s of %d bytes over %d", tc.kind, tc.bytes, tc.g)
	}
}

// instruction encodes an HloInstructionProto with the given name, opcode, id, operands, f32
// shape and extra fields.
func instruction(name, opcode string, id int64, operands []int64, dims []int64, extra ...[]byte) []byte {
	var shape []byte
	shape = protowire.AppendTag(shape, 2, protowire.VarintType)
	shape = protowire.AppendVarint(shape, 11) // F32
	for _, d := range dims {
		shape = protowire.AppendTag(shape, 3, protowire.VarintType)
		shape = protowire.AppendVarint(shape, uint64(d))
	}
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, opcode)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, shape)
	b = protowire.AppendTag(b, 35, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	for _, o := range operands {
		b = protowire.AppendTag(b, 36, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(o))
	}
	for _, e := range extra {
		b = append(b, e...)
	}
	return b
}

func bytesField(n protowire.Number, v []byte) []byte {
	b := protowire.AppendTag(nil, n, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func varintField(n protowire.Number, v uint64) []byte {
	b := protowire.AppendTag(nil, n, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// TestCollectivesDecoding covers the encodings of replica groups that the CPU plugins do not
// all write: explicit groups (field 49), an iota list in collective_device_list (87) and on
// the instruction itself (92), and a cross-replica op without a channel id.
func TestCollectivesDecoding(t *testing.T) {
	group := func(ids ...uint64) []byte {
		var b []byte
		for _, id := range ids {
			b = append(b, varintField(1, id)...)
		}
		return b
	}
	iota := append(append(append(varintField(1, 2), varintField(2, 2)...), varintField(3, 4)...), varintField(3, 1)...)
	p0 := instruction("p0", "parameter", 1, nil, []int64{4, 2})
	comp := append(bytesField(1, []byte("main")), bytesField(2, p0)...)
	comp = append(comp, bytesField(2, instruction("ar.explicit", "all-reduce", 2, []int64{1}, []int64{4, 2},
		varintField(26, 1), bytesField(49, group(0, 2)), bytesField(49, group(1, 3))))...)
	comp = append(comp, bytesField(2, instruction("ag.87", "all-gather-start", 3, []int64{1}, []int64{8, 2},
		varintField(26, 2), varintField(14, 0), bytesField(87, bytesField(2, iota))))...)
	comp = append(comp, bytesField(2, instruction("ag.done", "all-gather-done", 4, []int64{3}, []int64{8, 2}))...)
	comp = append(comp, bytesField(2, instruction("rs.92", "reduce-scatter", 5, []int64{1}, []int64{2, 2},
		varintField(26, 3), varintField(14, 0), bytesField(92, iota)))...)
	comp = append(comp, bytesField(2, instruction("ar.replica", "all-reduce", 6, []int64{1}, []int64{4, 2}))...)
	comp = append(comp, bytesField(2, instruction("cp", "collective-permute", 7, []int64{1}, []int64{4, 2},
		varintField(26, 4), bytesField(52, append(varintField(1, 0), varintField(2, 1)...))))...)
	module := bytesField(3, comp)

	got, err := collectives(module, "hlo", 4)
	require.NoError(t, err)
	require.Len(t, got, 5)
	assert.Equal(t, "all-reduce f32[4,2] groups [[0 2] [1 3]] moves 32 B/device", got[0].String())
	assert.Equal(t, "all-gather f32[4,2] dims [0] groups [[0 1] [2 3]] moves 32 B/device", got[1].String())
	assert.Equal(t, "reduce-scatter f32[4,2] dims [0] groups [[0 1] [2 3]] moves 16 B/device", got[2].String())
	assert.Equal(t, "all-reduce f32[4,2] groups [[0]] moves 0 B/device", got[3].String())
	assert.Equal(t, "collective-permute f32[4,2] pairs [[0 1]] moves 32 B/device", got[4].String())
	assert.Equal(t, "ag.87", got[1].Name)
	assert.Equal(t, "main", got[1].Computation)

	wrapped, err := collectives(bytesField(1, module), "hlo_with_config", 4)
	require.NoError(t, err)
	assert.Equal(t, got, wrapped)

	_, err = collectives(module, "mlir", 4)
	assert.ErrorIs(t, err, errProto)
	_, err = collectives([]byte{0x1a, 0x05, 0x12, 0x10}, "hlo", 4)
	assert.ErrorIs(t, err, errProto)
	bad := bytesField(3, bytesField(2, instruction("ar", "all-reduce", 2, []int64{9}, []int64{1}, varintField(26, 1))))
	_, err = collectives(bad, "hlo", 4)
	assert.ErrorIs(t, err, errProto)
	assert.ErrorContains(t, err, "operand 9")
}
