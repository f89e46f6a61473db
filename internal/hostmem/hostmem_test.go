package hostmem

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
)

func TestBytes(t *testing.T) {
	for _, n := range []int{0, 1, 100, minSize - 1, minSize, 3<<20 + 5} {
		b := Bytes(n)
		if len(b) != n || cap(b) < n {
			t.Fatalf("Bytes(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i := range b {
			b[i] = byte(i) // writable everywhere
		}
	}
}

func TestFlat(t *testing.T) {
	cases := []struct {
		d    dtypes.DType
		want string
	}{
		{dtypes.Bool, "[]bool"}, {dtypes.Int8, "[]int8"}, {dtypes.Int16, "[]int16"}, {dtypes.Int32, "[]int32"},
		{dtypes.Int64, "[]int64"}, {dtypes.Uint8, "[]uint8"}, {dtypes.Uint16, "[]uint16"}, {dtypes.Uint32, "[]uint32"},
		{dtypes.Uint64, "[]uint64"}, {dtypes.Float16, "[]uint16"}, {dtypes.BFloat16, "[]uint16"},
		{dtypes.Float32, "[]float32"}, {dtypes.Float64, "[]float64"},
	}
	for _, c := range cases {
		for _, n := range []int{0, 3, 40000} {
			flat, raw := Flat(c.d, n)
			if got := typeName(flat); got != c.want {
				t.Fatalf("Flat(%v, %d) is %s, want %s", c.d, n, got, c.want)
			}
			if len(raw) != n*c.d.Size() {
				t.Fatalf("Flat(%v, %d): %d bytes", c.d, n, len(raw))
			}
		}
	}
	if flat, raw := Flat(dtypes.InvalidDType, 3); flat != nil || raw != nil {
		t.Fatalf("Flat of an invalid type: %v %v", flat, raw)
	}
}

func typeName(v any) string {
	switch v.(type) {
	case []bool:
		return "[]bool"
	case []int8:
		return "[]int8"
	case []int16:
		return "[]int16"
	case []int32:
		return "[]int32"
	case []int64:
		return "[]int64"
	case []uint8:
		return "[]uint8"
	case []uint16:
		return "[]uint16"
	case []uint32:
		return "[]uint32"
	case []uint64:
		return "[]uint64"
	case []float32:
		return "[]float32"
	case []float64:
		return "[]float64"
	}
	return "?"
}
