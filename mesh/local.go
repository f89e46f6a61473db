package mesh

import (
	"fmt"
	"slices"
)

// LocalDevices returns the devices of the given process, in mesh order
// (JAX's Mesh.local_devices for that process).
func (m Mesh) LocalDevices(process int) []Device {
	var out []Device
	slot := m.processSlot(process)
	for p, at := range m.procAt {
		if at == slot {
			out = append(out, m.devices[p])
		}
	}
	return out
}

// ProcessIndices returns the distinct process indices of the mesh's
// devices, sorted. They are found once, when the mesh is made; each call
// costs a copy of them.
func (m Mesh) ProcessIndices() []int { return slices.Clone(m.procs) }

// IsMultiProcess reports whether the mesh's devices span more than one
// process (JAX's Mesh.is_multi_process, seen from any one of them).
func (m Mesh) IsMultiProcess() bool { return len(m.procs) > 1 }

// LocalMesh returns the smallest sub-cube of m holding every device of the
// given process, with m's axis names and types (JAX's Mesh.local_mesh). It
// returns an error wrapping ErrNotContiguous when that sub-cube also holds
// devices of other processes, and ErrNoDevices when the process has no
// device in m. The empty mesh is returned unchanged.
func (m Mesh) LocalMesh(process int) (Mesh, error) {
	if m.Empty() {
		return m, nil
	}
	n := m.NumAxes()
	lo := make([]int, n)
	hi := make([]int, n)
	for i := range lo {
		lo[i], hi[i] = m.abs.sizes[i], -1
	}
	found := false
	for p, d := range m.devices {
		if d.ProcessIndex() != process {
			continue
		}
		found = true
		for i, c := range m.abs.coords(p) {
			lo[i], hi[i] = min(lo[i], c), max(hi[i], c)
		}
	}
	if !found {
		return Mesh{}, fmt.Errorf("mesh: %w: process %d has no device in %s", ErrNoDevices, process, m)
	}
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = hi[i] - lo[i] + 1
	}
	sub, err := NewAbstract(sizes, m.abs.names, m.abs.types...)
	if err != nil {
		return Mesh{}, err
	}
	devices := make([]Device, 0, sub.Size())
	c := make([]int, n)
	for q := range sub.Size() {
		sc := sub.coords(q)
		for i := range c {
			c[i] = lo[i] + sc[i]
		}
		d := m.devices[m.abs.position(c)]
		if d.ProcessIndex() != process {
			return Mesh{}, fmt.Errorf("mesh: %w: when passing host local inputs, devices connected to a single host must form a contiguous subcube of the global device mesh, but the hull %s of process %d's devices in %s also holds device %d of process %d",
				ErrNotContiguous, hullString(lo, hi), process, m, d.ID(), d.ProcessIndex())
		}
		devices = append(devices, d)
	}
	return withDevices(sub, devices)
}

// hullString formats per-axis inclusive bounds as numpy slices: [0:2, 1:3].
func hullString(lo, hi []int) string {
	idx := make(Index, len(lo))
	for i := range lo {
		idx[i] = Range{lo[i], hi[i] + 1}
	}
	return idx.String()
}
