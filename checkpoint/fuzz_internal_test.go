package checkpoint

import (
	"testing"
)

// FuzzMeta feeds the metadata readers edited .zarray and zarr.json texts: they never panic,
// and what they accept has a chunk layout a reader can use (check's rules hold).
func FuzzMeta(f *testing.F) {
	for _, seed := range []string{
		`{"chunks":[2,6],"compressor":{"id":"zstd","level":1},"dimension_separator":".","dtype":"<f4","fill_value":null,"filters":null,"order":"C","shape":[8,6],"zarr_format":2}`,
		`{"chunks":[],"compressor":null,"dtype":"|b1","order":"C","shape":[],"zarr_format":2}`,
		`{"chunks":[4],"compressor":{"id":"zstd","level":1},"dtype":"bfloat16","fill_value":null,"filters":null,"order":"C","shape":[4],"zarr_format":2}`,
		`{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"configuration":{"endian":"little"},"name":"bytes"}],"data_type":"float32","fill_value":0.0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
		`{"chunk_grid":{"configuration":{"chunk_shape":[1]},"name":"regular"},"chunk_key_encoding":{"configuration":{"separator":"."},"name":"v2"},"codecs":[{"name":"bytes"},{"configuration":{"level":1},"name":"zstd"}],"data_type":"int4","fill_value":0,"node_type":"array","shape":[3],"zarr_format":3}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, parse := range []func([]byte) (layout, error){parseZarray, parseZarr3} {
			l, err := parse([]byte(text))
			if err != nil {
				continue
			}
			if err := l.check(); err != nil {
				t.Fatalf("accepted %q with a layout check refuses: %v", text, err)
			}
			pos := make([]int, len(l.shape))
			_ = l.key(pos)
			_ = l.chunkBytes()
		}
	})
}
