package mesh

import (
	"fmt"
	"slices"
	"strings"
)

// The memory kinds of JAX's devices: a NamedSharding's MemoryKind names one of them.
const (
	// MemoryDevice is the device's own memory (HBM on an accelerator), the default.
	MemoryDevice = "device"
	// MemoryPinnedHost is page-locked host memory the device can reach directly.
	MemoryPinnedHost = "pinned_host"
	// MemoryUnpinnedHost is ordinary host memory.
	MemoryUnpinnedHost = "unpinned_host"
)

// memoryKinds are the kinds an abstract sharding may name, and those of a device that does not
// say which it has, in JAX's order.
var memoryKinds = []string{MemoryDevice, MemoryPinnedHost, MemoryUnpinnedHost}

// MemoryKindsDevice is a Device that says which memory kinds it can address (a PJRT device lists its
// memories). NamedSharding.WithMemoryKind checks a concrete sharding's kind against the first
// device of its mesh when the device implements it, and against the three kinds of JAX's devices
// otherwise.
type MemoryKindsDevice interface {
	Device
	MemoryKinds() []string // the kinds of the memories the device can address, the default first
}

// MemoryKindError reports a memory kind a sharding cannot have: one its mesh's devices cannot
// address, or (on an abstract mesh) none of JAX's kinds. It wraps ErrMemoryKind.
type MemoryKindError struct {
	Kind   string   // the kind asked for
	Device string   // the device kind checked ("cpu"), "" on an abstract mesh
	Valid  []string // the kinds that would do
}

// Error returns JAX's message for the same mistake.
func (e *MemoryKindError) Error() string {
	if e.Device == "" {
		return fmt.Sprintf("mesh: Got invalid memory kind: %s. Valid memory kinds are: %s", e.Kind, strings.Join(e.Valid, ", "))
	}
	return fmt.Sprintf("mesh: Could not find memory addressable by device %s. Device %s can address the following memory kinds: %s. Got memory kind: %s",
		e.Device, e.Device, strings.Join(e.Valid, ", "), e.Kind)
}

// Unwrap returns ErrMemoryKind.
func (e *MemoryKindError) Unwrap() error { return ErrMemoryKind }

// MemoryKind returns the memory kind the sharding's shards live in: MemoryDevice for a sharding
// over a concrete mesh made without one (JAX reads the devices' default memory), "" for an
// abstract one made without one.
func (s NamedSharding) MemoryKind() string {
	if s.memory == "" && s.devices {
		return s.defaultMemory()
	}
	return s.memory
}

// defaultMemory is the kind of the default memory of the mesh's devices.
func (s NamedSharding) defaultMemory() string {
	if kinds := s.deviceMemoryKinds(); len(kinds) > 0 {
		return kinds[0]
	}
	return MemoryDevice
}

// deviceMemoryKinds returns the memory kinds of the mesh's first device, nil when it does not
// say or the sharding is abstract.
func (s NamedSharding) deviceMemoryKinds() []string {
	if !s.devices || s.mesh.Size() == 0 {
		return nil
	}
	if d, ok := s.mesh.devices[0].(MemoryKindsDevice); ok {
		return d.MemoryKinds()
	}
	return nil
}

// WithMemoryKind returns s with its shards in memory of the given kind (JAX's
// NamedSharding.with_memory_kind). Over a concrete mesh the kind must be one the mesh's devices
// can address; over an abstract mesh one of MemoryDevice, MemoryPinnedHost, MemoryUnpinnedHost.
// Otherwise the error is a *MemoryKindError (ErrMemoryKind) listing the kinds that would do.
func (s NamedSharding) WithMemoryKind(kind string) (NamedSharding, error) {
	if err := s.valid(); err != nil {
		return NamedSharding{}, err
	}
	valid, device := memoryKinds, ""
	if s.devices {
		device = s.mesh.devices[0].Kind()
		if kinds := s.deviceMemoryKinds(); len(kinds) > 0 {
			valid = kinds
		}
	}
	if !slices.Contains(valid, kind) {
		return NamedSharding{}, &MemoryKindError{Kind: kind, Device: device, Valid: slices.Clone(valid)}
	}
	out := s
	out.memory = kind
	if s.devices && kind == s.defaultMemory() {
		out.memory = "" // JAX's concrete shardings read None as the default: the two are equal
	}
	out.key = withMemoryKey(s.baseKey(), out.memory)
	return out, nil
}

// baseKey is the key without the memory kind.
func (s NamedSharding) baseKey() string {
	if s.memory == "" {
		return s.key
	}
	return s.key[:len(s.key)-len(s.memory)-2]
}

// withMemoryKey appends a memory kind other than the default to a sharding key: \x02 kind \x02
// (no spec key holds \x02).
func withMemoryKey(key, memory string) string {
	if memory == "" {
		return key
	}
	return key + "\x02" + memory + "\x02"
}
