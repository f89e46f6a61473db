package mesh

import "slices"

// SimDevice is a Device described by plain values, for tests, examples and
// planning without a PJRT client. It also implements CoordsDevice and
// SliceDevice. Platform and Kind default to "cpu" when empty.
type SimDevice struct {
	Id           int    // ID()
	Process      int    // ProcessIndex()
	PlatformName string // Platform(); "cpu" when empty
	KindName     string // Kind(); "cpu" when empty
	Coordinates  []int  // Coords() (x, y, z) for TPU-like placement
	Core         int    // CoreOnChip()
	Slice        int    // SliceIndex()
}

var (
	_ CoordsDevice = SimDevice{}
	_ SliceDevice  = SimDevice{}
)

// ID returns d.Id.
func (d SimDevice) ID() int { return d.Id }

// ProcessIndex returns d.Process.
func (d SimDevice) ProcessIndex() int { return d.Process }

// Platform returns d.PlatformName, or "cpu".
func (d SimDevice) Platform() string {
	if d.PlatformName == "" {
		return "cpu"
	}
	return d.PlatformName
}

// Kind returns d.KindName, or "cpu".
func (d SimDevice) Kind() string {
	if d.KindName == "" {
		return "cpu"
	}
	return d.KindName
}

// Coords returns a copy of d.Coordinates.
func (d SimDevice) Coords() []int { return slices.Clone(d.Coordinates) }

// CoreOnChip returns d.Core.
func (d SimDevice) CoreOnChip() int { return d.Core }

// SliceIndex returns d.Slice.
func (d SimDevice) SliceIndex() int { return d.Slice }

// SimDevices returns n CPU SimDevices with ids 0..n-1 in process 0.
func SimDevices(n int) []Device {
	out := make([]Device, max(n, 0))
	for i := range out {
		out[i] = SimDevice{Id: i}
	}
	return out
}
