package pjrt

import (
	"crypto/sha256"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeEntryBitFlips flips every bit of an entry's header and every 61st bit of its
// payload: the decoder refuses each, and returns the payload of the entry as written.
func TestDecodeEntryBitFlips(t *testing.T) {
	key := sha256.Sum256([]byte("key"))
	payload := make([]byte, 4096)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	entry := encodeEntry(key, payload)
	require.Len(t, entry, entryHeaderLen+len(payload))
	got, err := decodeEntry(key, entry)
	require.NoError(t, err)
	require.Equal(t, payload, got)

	for bit := 0; bit < len(entry)*8; bit++ {
		if bit >= entryHeaderLen*8 && bit%61 != 0 {
			continue
		}
		d := slices.Clone(entry)
		d[bit/8] ^= 1 << (bit % 8)
		_, err := decodeEntry(key, d)
		require.Error(t, err, "bit %d flipped", bit)
	}
	other := sha256.Sum256([]byte("other key"))
	_, err = decodeEntry(other, entry)
	assert.ErrorContains(t, err, "another key")
	for _, n := range []int{0, 1, entryHeaderLen - 1, entryHeaderLen, len(entry) - 1} {
		_, err = decodeEntry(key, entry[:n])
		assert.Error(t, err, "truncated to %d bytes", n)
	}
	_, err = decodeEntry(key, append(slices.Clone(entry), 0))
	assert.ErrorContains(t, err, "the header gives 4096 payload bytes, the entry has 4097")
	_, err = decodeEntry(key, payload)
	assert.ErrorContains(t, err, "no entry header")
}

// TestHostCPU: the host's CPU description is read once and names the architecture.
func TestHostCPU(t *testing.T) {
	a := hostCPU()
	assert.Contains(t, a, runtime.GOOS+"/"+runtime.GOARCH)
	assert.Equal(t, a, hostCPU())
	if runtime.GOOS == "linux" {
		assert.NotContains(t, a, "features unknown", "/proc/cpuinfo has a flags or Features line")
	}
}
