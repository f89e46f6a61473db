package pjrt

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOpSharding(t *testing.T) {
	// The spmd_output_sharding XLA reported for (8x2 P(x,y), its 2x8 transpose) on mesh x=4, y=2:
	// a tuple of {devices=[4,2]<=[8]} and {devices=[2,4]<=[4,2]T(1,0)}.
	raw := []byte("\x08\x02" + "\x2a\x0c\x08\x03\x1a\x02\x04\x02\x4a\x01\x08\x52\x01\x00" +
		"\x2a\x0e\x08\x03\x1a\x02\x02\x04\x4a\x02\x04\x02\x52\x02\x01\x00")
	s, err := parseOpSharding(raw)
	require.NoError(t, err)
	assert.Equal(t, "{{devices=[4,2]0,1,2,3,4,5,6,7}, {devices=[2,4]0,2,4,6,1,3,5,7}}", s.String())

	_, err = parseOpSharding([]byte{0x2a, 0x10, 0x08})
	assert.ErrorIs(t, err, errProto)
	_, err = outputSharding([]byte{0x0a, 0x00}, "mlir")
	assert.ErrorIs(t, err, errProto)
	rep, err := outputSharding([]byte{0x0a, 0x00}, "hlo_with_config")
	require.NoError(t, err)
	assert.Equal(t, "{replicated}", rep.String())
}
