package mesh

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Device is what a mesh needs to know about one device. pjrt devices and
// test fakes (SimDevice) implement it.
type Device interface {
	ID() int           // global device id, unique within a client
	ProcessIndex() int // the process (host) the device is attached to
	Platform() string  // lower-case platform: "cpu", "cuda", "tpu"
	Kind() string      // device kind: "cpu", "TPU v4", ...
}

// CoordsDevice is a Device with a physical position (TPU-like), used by
// Create to place devices by their interconnect coordinates.
type CoordsDevice interface {
	Device
	Coords() []int   // physical chip coordinates (x, y, z)
	CoreOnChip() int // core index within the chip
}

// SliceDevice is a Device that belongs to a multi-slice deployment, used by
// CreateHybrid to group devices by slice.
type SliceDevice interface {
	Device
	SliceIndex() int
}

// Mesh is an N-d array of devices with named axes (JAX's Mesh). Devices are
// stored row-major ("mesh order"). Mesh is an immutable value: accessors
// return copies, and it is safe for concurrent use. The zero Mesh is the
// empty mesh: it has no axes and size 0, and shardings over it fail.
type Mesh struct {
	abs     Abstract
	devices []Device
	ids     []int
	procs   []int   // distinct process indices, sorted
	procAt  []int32 // per position: the index of its device's process in procs
	key     string
}

// New arranges devices row-major into a mesh of the given shape and axis
// names, all axes Auto (use WithAxisTypes to change them). It returns an
// error wrapping ErrInvalidMesh if len(shape) != len(names), a name is empty,
// a size is < 1 or a device is nil; ErrDuplicateAxis for a repeated name;
// ErrDeviceCount if len(devices) is not the product of shape; and
// ErrDuplicateDevice if two devices share an id. New(nil, nil) is the empty
// mesh.
func New(devices []Device, shape []int, names ...string) (Mesh, error) {
	if len(shape) != len(names) {
		return Mesh{}, fmt.Errorf("mesh: %w: mesh requires the number of dims of its shape to equal the number of axis names, but got shape %s (%d dims) and axis names %s (%d names)",
			ErrInvalidMesh, pyIntTuple(shape), len(shape), pyStrTuple(names), len(names))
	}
	if len(shape) == 0 {
		if len(devices) != 0 {
			return Mesh{}, fmt.Errorf("mesh: %w: number of devices %d must equal the product of mesh shape () for an empty mesh, which is 0", ErrDeviceCount, len(devices))
		}
		return Mesh{}, nil
	}
	abs, err := NewAbstract(shape, names)
	if err != nil {
		return Mesh{}, err
	}
	return withDevices(abs, devices)
}

// MustNew is New that panics on error, for tests and package variables.
func MustNew(devices []Device, shape []int, names ...string) Mesh {
	m, err := New(devices, shape, names...)
	if err != nil {
		panic(err)
	}
	return m
}

// FromAbstract binds an abstract mesh to devices (row-major), keeping its
// axis types. Errors are as for New.
func FromAbstract(a Abstract, devices []Device) (Mesh, error) {
	if a.NumAxes() == 0 {
		return New(devices, nil)
	}
	return withDevices(a, devices)
}

func withDevices(abs Abstract, devices []Device) (Mesh, error) {
	if len(devices) != abs.Size() {
		return Mesh{}, fmt.Errorf("mesh: %w: number of devices %d must equal the product of mesh shape %s",
			ErrDeviceCount, len(devices), pyIntTuple(abs.sizes))
	}
	ids := make([]int, len(devices))
	// Devices of one process are usually adjacent: a run is a stretch of positions with one
	// process, and procs starts as one entry per run.
	var procs, runStarts []int
	lo, hi := 0, 0
	for i, d := range devices {
		if d == nil {
			return Mesh{}, fmt.Errorf("mesh: %w: device at position %d is nil", ErrInvalidMesh, i)
		}
		id := d.ID()
		ids[i] = id
		if i == 0 || id < lo {
			lo = id
		}
		if i == 0 || id > hi {
			hi = id
		}
		if p := d.ProcessIndex(); len(procs) == 0 || procs[len(procs)-1] != p {
			procs = append(procs, p)
			runStarts = append(runStarts, i)
		}
	}
	if err := checkDistinctIDs(ids, lo, hi); err != nil {
		return Mesh{}, err
	}
	procAt := make([]int32, len(devices))
	runProcs := slices.Clone(procs)
	slices.Sort(procs)
	procs = slices.Clip(slices.Compact(procs))
	for r, start := range runStarts {
		end := len(devices)
		if r+1 < len(runStarts) {
			end = runStarts[r+1]
		}
		j, _ := slices.BinarySearch(procs, runProcs[r])
		for i := start; i < end; i++ {
			procAt[i] = int32(j)
		}
	}
	m := Mesh{abs: abs, devices: slices.Clone(devices), ids: ids, procs: procs, procAt: procAt}
	m.key = abs.key + "|" + idsDigest(ids)
	return m, nil
}

// processSlot returns the index of process in m.procs, or -1 when no device of the mesh
// belongs to it.
func (m Mesh) processSlot(process int) int32 {
	j, ok := slices.BinarySearch(m.procs, process)
	if !ok {
		return -1
	}
	return int32(j)
}

// checkDistinctIDs returns an error wrapping ErrDuplicateDevice naming the first repeated id
// and its two positions. ids lie in [lo, hi]; when that range is at most 4 times their number
// (the usual 0..N-1) a bit set finds a repeat in O(N), else a sorted copy in O(N log N); only
// then does a second pass find where.
func checkDistinctIDs(ids []int, lo, hi int) error {
	dup := false
	if span := uint64(hi) - uint64(lo); span < 4*uint64(len(ids)) {
		bits := make([]uint64, span/64+1)
		for _, id := range ids {
			k := uint64(id) - uint64(lo)
			if bits[k/64]&(1<<(k%64)) != 0 {
				dup = true
				break
			}
			bits[k/64] |= 1 << (k % 64)
		}
	} else {
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		for i := 1; i < len(sorted); i++ {
			if sorted[i] == sorted[i-1] {
				dup = true
				break
			}
		}
	}
	if !dup {
		return nil
	}
	seen := make(map[int]int, len(ids))
	for i, id := range ids {
		if j, ok := seen[id]; ok {
			return fmt.Errorf("mesh: %w: device %d is at positions %d and %d", ErrDuplicateDevice, id, j, i)
		}
		seen[id] = i
	}
	return nil
}

// idsDigest returns a fixed-size canonical digest of the device ids in order: the first 128
// bits of their SHA-256, in hex. A mesh's key holds it instead of the ids themselves, so that
// keys of meshes and of shardings over them cost the same at 8 and at 65,536 devices (issue
// 31); two different id lists have the same digest with probability 2^-128.
func idsDigest(ids []int) string {
	h := sha256.New()
	var buf [512]byte
	b := buf[:0]
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint64(b, uint64(id))
		if len(b) == len(buf) {
			h.Write(b)
			b = buf[:0]
		}
	}
	h.Write(b)
	var sum [sha256.Size]byte
	return "ids:" + strconv.Itoa(len(ids)) + ":" + hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// WithAxisTypes returns a copy of m with new axis types, one per axis, or an
// error wrapping ErrInvalidMesh.
func (m Mesh) WithAxisTypes(types ...AxisType) (Mesh, error) {
	abs, err := m.abs.WithAxisTypes(types...)
	if err != nil {
		return Mesh{}, err
	}
	return withDevices(abs, m.devices)
}

// Abstract returns the mesh without its devices.
func (m Mesh) Abstract() Abstract { return m.abs }

// AxisNames returns the axis names in mesh order.
func (m Mesh) AxisNames() []string { return m.abs.AxisNames() }

// AxisSizes returns the axis sizes in mesh order.
func (m Mesh) AxisSizes() []int { return m.abs.AxisSizes() }

// AxisTypes returns the axis types in mesh order.
func (m Mesh) AxisTypes() []AxisType { return m.abs.AxisTypes() }

// NumAxes returns the number of axes.
func (m Mesh) NumAxes() int { return m.abs.NumAxes() }

// Size returns the number of devices (0 for the empty mesh).
func (m Mesh) Size() int { return m.abs.Size() }

// Empty reports whether m is the empty mesh.
func (m Mesh) Empty() bool { return m.abs.Empty() }

// Shape returns the axes in mesh order (JAX's Mesh.shape).
func (m Mesh) Shape() []Axis { return m.abs.Shape() }

// AxisIndex returns the position of the named axis, or -1 if absent.
func (m Mesh) AxisIndex(name string) int { return m.abs.AxisIndex(name) }

// AxisSize returns the size of the named axis and whether it exists.
func (m Mesh) AxisSize(name string) (int, bool) { return m.abs.AxisSize(name) }

// Devices returns the devices in mesh order (row-major, JAX's devices.flat).
func (m Mesh) Devices() []Device { return slices.Clone(m.devices) }

// DeviceIDs returns the device ids in mesh order (row-major).
func (m Mesh) DeviceIDs() []int { return slices.Clone(m.ids) }

// Device returns the device at the given mesh coordinates, one per axis, or
// an error wrapping ErrInvalidMesh when they are out of range.
func (m Mesh) Device(coords ...int) (Device, error) {
	if m.Empty() {
		return nil, fmt.Errorf("mesh: %w: the empty mesh has no devices", ErrInvalidMesh)
	}
	if len(coords) != m.NumAxes() {
		return nil, fmt.Errorf("mesh: %w: got %d coordinates for a mesh with %d axes", ErrInvalidMesh, len(coords), m.NumAxes())
	}
	for i, c := range coords {
		if c < 0 || c >= m.abs.sizes[i] {
			return nil, fmt.Errorf("mesh: %w: coordinate %d for axis %q is outside [0, %d)", ErrInvalidMesh, c, m.abs.names[i], m.abs.sizes[i])
		}
	}
	return m.devices[m.abs.position(coords)], nil
}

// Coords returns the mesh coordinates of the device with the given id, and
// whether the mesh holds it.
func (m Mesh) Coords(id int) ([]int, bool) {
	p := slices.Index(m.ids, id)
	if p < 0 {
		return nil, false
	}
	return m.abs.coords(p), true
}

// Equal reports whether m and o have the same axis names, sizes, types and
// device ids in the same order.
func (m Mesh) Equal(o Mesh) bool { return m.key == o.key }

// Key returns a canonical string of names, sizes, types and device ids (the
// ids as a fixed-size digest, so the key's length does not grow with the
// mesh): equal meshes have equal keys. Use it as a map key.
func (m Mesh) Key() string { return m.key }

// String returns JAX's str of a Mesh, every axis type included:
// Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)); the empty mesh is Mesh().
// (JAX's repr, Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), axis_types=(Auto, Auto)),
// has no xlamesh counterpart; GoString adds the device ids.)
func (m Mesh) String() string { return m.abs.body() }

// GoString returns a Go-syntax-like form (for %#v) with the axes and the
// device ids as an N-d array, e.g. mesh.Mesh{"x":2, "y":2, DeviceIDs: [[0 1] [2 3]]}.
// Non-Auto axis types follow the size: "x":2/Explicit.
func (m Mesh) GoString() string {
	var b strings.Builder
	b.WriteString("mesh.Mesh{")
	for i, n := range m.abs.names {
		b.WriteString(strconv.Quote(n))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(m.abs.sizes[i]))
		if m.abs.types[i] != Auto {
			b.WriteByte('/')
			b.WriteString(m.abs.types[i].String())
		}
		b.WriteString(", ")
	}
	b.WriteString("DeviceIDs: ")
	writeNested(&b, m.ids, m.abs.sizes)
	b.WriteByte('}')
	return b.String()
}

// writeNested writes ids as a nested array of the given shape: [[0 1] [2 3]].
func writeNested(b *strings.Builder, ids []int, shape []int) {
	if len(shape) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteByte('[')
	if len(shape) == 1 {
		for i, id := range ids {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(id))
		}
	} else {
		step := len(ids) / shape[0]
		for i := range shape[0] {
			if i > 0 {
				b.WriteByte(' ')
			}
			writeNested(b, ids[i*step:(i+1)*step], shape[1:])
		}
	}
	b.WriteByte(']')
}
