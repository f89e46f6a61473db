package mesh

import "testing"

// BenchmarkDevicesIndicesMap: a 16x16x8 (2048-device) mesh, rank-4 shape.
func BenchmarkDevicesIndicesMap(b *testing.B) {
	m, err := New(SimDevices(2048), []int{16, 16, 8}, "x", "y", "z")
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewNamedSharding(m, P("x", nil, Axes("z", "y")))
	if err != nil {
		b.Fatal(err)
	}
	shape := []int{64, 3, 256, 7}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.DevicesIndicesMap(shape); err != nil {
			b.Fatal(err)
		}
	}
}
