package pjrt

// #include "xlamesh_pjrt.h"
import "C"

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// ErrMemoryKind: a device has no memory of the kind asked for (Device.Memory); the message
// names the kind, the device and the kinds it has.
var ErrMemoryKind = errors.New("no such memory kind")

// Memory is one memory space of a client (PJRT_Memory): a kind of memory, such as "device",
// "pinned_host" or "unpinned_host", that one or more devices address. JAX's Device.memory(kind)
// and its shardings' memory_kind name the same spaces. Memories come from Device.Memories,
// Device.DefaultMemory, Device.Memory and Buffer.Memory; the client owns them, reads each once
// (at Open) and hands out the same *Memory every time, so that they compare with ==. A Memory
// is immutable and safe for concurrent use; it stays readable after its client is closed.
type Memory struct {
	client  *Client
	c       *C.PJRT_Memory
	id      int
	kind    string
	text    string
	devices []*Device
}

// ID returns the plugin's id of the memory (PJRT_Memory_Id), unique among the client's memories
// of the same kind.
func (m *Memory) ID() int { return m.id }

// Kind returns the memory's kind (PJRT_Memory_Kind), e.g. "device", "pinned_host" or
// "unpinned_host".
func (m *Memory) Kind() string { return m.kind }

// String returns the plugin's short description of the memory (PJRT_Memory_ToString), or
// "Memory(kind, id=N)" when the plugin has none.
func (m *Memory) String() string {
	if m.text != "" {
		return m.text
	}
	return fmt.Sprintf("Memory(%s, id=%d)", m.kind, m.id)
}

// Devices returns the devices that address the memory (PJRT_Memory_AddressableByDevices), in the
// plugin's order.
func (m *Memory) Devices() []*Device { return slices.Clone(m.devices) }

// Client returns the client the memory belongs to.
func (m *Memory) Client() *Client { return m.client }

// addressableBy reports whether d addresses m.
func (m *Memory) addressableBy(d *Device) bool { return slices.Contains(m.devices, d) }

// deviceMemories is what the plugin reports about the memories of one addressable device, read
// when the client opens.
type deviceMemories struct {
	list     []*Memory      // PJRT_Device_AddressableMemories, in the plugin's order
	listErr  error          // why list is missing, if it is
	defaultC *C.PJRT_Memory // PJRT_Device_DefaultMemory
	defCErr  error          // why defaultC is missing, if it is
	def      *Memory        // defaultC as a Memory
	defErr   error          // why def is missing, if it is
}

// memoryFunctions are the functions without which a memory cannot be described.
var memoryFunctions = []fn{fnMemoryID, fnMemoryKind, fnMemoryDevices}

// needAll returns the error of need for the first of fs the plugin lacks, or nil.
func (a *api) needAll(fs ...fn) error {
	for _, f := range fs {
		if err := a.need(f); err != nil {
			return err
		}
	}
	return nil
}

// readMemories reads the memories of every addressable device (run by Open, after the devices
// are known). A plugin lacking the functions, or failing to answer, is no reason not to open:
// the error is kept and returned by the Device methods that need what is missing.
func (c *Client) readMemories() {
	c.memories = map[*C.PJRT_Memory]*Memory{}
	a := c.api
	for _, d := range c.addressable {
		dm := &d.mem
		if err := a.need(fnDeviceDefaultMemory); err != nil {
			dm.defCErr = err
		} else {
			args := C.PJRT_Device_DefaultMemory_Args{device: d.c}
			if err := a.toError(fmt.Sprintf("default memory of %s", d), ErrDevice, C.xm_Device_DefaultMemory(a.p, &args)); err != nil {
				dm.defCErr = unimplementedAsKind(err)
			} else {
				dm.defaultC = args.memory
			}
		}
		if err := a.needAll(append([]fn{fnDeviceMemories}, memoryFunctions...)...); err != nil {
			dm.listErr = err
		} else {
			args := C.PJRT_Device_AddressableMemories_Args{device: d.c}
			if err := a.toError(fmt.Sprintf("memories of %s", d), ErrDevice, C.xm_Device_AddressableMemories(a.p, &args)); err != nil {
				dm.listErr = unimplementedAsKind(err)
			} else {
				for _, pm := range cSlice(args.memories, args.num_memories) {
					m, err := c.memoryOf(pm)
					if err != nil {
						dm.list, dm.listErr = nil, err
						break
					}
					dm.list = append(dm.list, m)
				}
			}
		}
		if dm.defCErr != nil {
			dm.defErr = dm.defCErr
		} else {
			dm.def, dm.defErr = c.memoryOf(dm.defaultC)
		}
	}
}

// memoryOf returns the Memory of a PJRT_Memory of the client, describing it on first sight.
func (c *Client) memoryOf(pm *C.PJRT_Memory) (*Memory, error) {
	if pm == nil {
		return nil, fmt.Errorf("pjrt: memory: %w: the plugin returned a null memory", ErrDevice)
	}
	c.memMu.Lock()
	defer c.memMu.Unlock()
	if m, ok := c.memories[pm]; ok {
		return m, nil
	}
	a := c.api
	if err := a.needAll(memoryFunctions...); err != nil {
		return nil, err
	}
	m := &Memory{client: c, c: pm}
	id := C.PJRT_Memory_Id_Args{memory: pm}
	if err := a.toError("memory id", ErrDevice, C.xm_Memory_Id(a.p, &id)); err != nil {
		return nil, err
	}
	m.id = int(id.id)
	k := C.PJRT_Memory_Kind_Args{memory: pm}
	if err := a.toError("memory kind", ErrDevice, C.xm_Memory_Kind(a.p, &k)); err != nil {
		return nil, err
	}
	m.kind = goString(k.kind, k.kind_size)
	if a.has(fnMemoryToString) {
		s := C.PJRT_Memory_ToString_Args{memory: pm}
		if err := a.toError("memory string", ErrDevice, C.xm_Memory_ToString(a.p, &s)); err != nil {
			return nil, err
		}
		m.text = goString(s.to_string, s.to_string_size)
	}
	ds := C.PJRT_Memory_AddressableByDevices_Args{memory: pm}
	if err := a.toError(fmt.Sprintf("devices of memory %s", m), ErrDevice, C.xm_Memory_AddressableByDevices(a.p, &ds)); err != nil {
		return nil, err
	}
	for _, pd := range cSlice(ds.devices, ds.num_devices) {
		d := deviceOf(c.addressable, pd)
		if d == nil {
			return nil, fmt.Errorf("pjrt: memory %s: %w: a device addressing it is not an addressable device of the client", m, ErrDevice)
		}
		m.devices = append(m.devices, d)
	}
	c.memories[pm] = m
	return m, nil
}

// Memories returns the memories the device addresses (PJRT_Device_AddressableMemories), in the
// plugin's order: on XLA's CPU and GPU plugins "device", "pinned_host" and "unpinned_host". A
// plugin without the memory functions gives an error wrapping ErrUnimplemented; a device this
// process cannot address, one wrapping ErrDevice.
func (d *Device) Memories() ([]*Memory, error) {
	if err := d.checkMemories(); err != nil {
		return nil, err
	}
	if d.mem.listErr != nil {
		return nil, d.mem.listErr
	}
	return slices.Clone(d.mem.list), nil
}

// DefaultMemory returns the memory the device keeps data in unless told otherwise
// (PJRT_Device_DefaultMemory): "device" on the CPU and GPU plugins. Errors as for Memories.
func (d *Device) DefaultMemory() (*Memory, error) {
	if err := d.checkMemories(); err != nil {
		return nil, err
	}
	if d.mem.defErr != nil {
		return nil, d.mem.defErr
	}
	return d.mem.def, nil
}

// Memory returns the device's memory of the given kind, like JAX's Device.memory(kind). When
// the device has none of that kind the error wraps ErrMemoryKind and lists the kinds it has;
// other errors are those of Memories.
func (d *Device) Memory(kind string) (*Memory, error) {
	list, err := d.Memories()
	if err != nil {
		return nil, err
	}
	for _, m := range list {
		if m.kind == kind {
			return m, nil
		}
	}
	return nil, fmt.Errorf("pjrt: memory: %w %q on %s (it has %s)", ErrMemoryKind, kind, d, memoryKinds(list))
}

// checkMemories fails for a device whose memories were not read: one this process cannot address.
func (d *Device) checkMemories() error {
	if d == nil {
		return fmt.Errorf("pjrt: memory: %w: nil device", ErrDevice)
	}
	if !d.info.addressable {
		return fmt.Errorf("pjrt: memory: %w: device %d is not addressable from process %d", ErrDevice, d.info.id, d.client.processIndex)
	}
	return nil
}

// defaultMemoryC returns the device's default PJRT_Memory (for calls that need one whatever the
// plugin says of the memory itself).
func (d *Device) defaultMemoryC() (*C.PJRT_Memory, error) {
	if err := d.checkMemories(); err != nil {
		return nil, err
	}
	if d.mem.defCErr != nil {
		return nil, d.mem.defCErr
	}
	return d.mem.defaultC, nil
}

// memoryKinds lists the kinds of ms, sorted and quoted, for messages: "device", "pinned_host".
func memoryKinds(ms []*Memory) string {
	if len(ms) == 0 {
		return "no memories"
	}
	kinds := make([]string, len(ms))
	for i, m := range ms {
		kinds[i] = strconv.Quote(m.kind)
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}

// checkMemory checks that m is a memory of c that dev addresses (any device when dev is nil).
func (c *Client) checkMemory(m *Memory, dev *Device) error {
	if m == nil {
		return fmt.Errorf("%w: nil memory", ErrDevice)
	}
	if m.client != c {
		return fmt.Errorf("%w: memory %s belongs to another client", ErrDevice, m)
	}
	if dev != nil && !m.addressableBy(dev) {
		return fmt.Errorf("%w: memory %s is not addressable by %s (it is addressed by %s)", ErrDevice, m, dev, deviceList(m.devices))
	}
	return nil
}

// deviceList names devices for messages: "CpuDevice(id=0), CpuDevice(id=1)".
func deviceList(ds []*Device) string {
	if len(ds) == 0 {
		return "no device"
	}
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.String()
	}
	return strings.Join(names, ", ")
}

// unimplementedAsKind makes a plugin's *Error with code Unimplemented match ErrUnimplemented:
// a plugin may have a function's slot and still not implement it.
func unimplementedAsKind(err error) error {
	if e, ok := err.(*Error); ok && e.Code == Unimplemented {
		e.Kind = ErrUnimplemented
	}
	return err
}

// Memory returns the memory the buffer lives in (PJRT_Buffer_Memory), like JAX's
// Array.sharding.memory_kind for one shard. A closed buffer gives an error wrapping ErrClosed; a
// plugin without PJRT_Buffer_Memory, one wrapping ErrUnimplemented.
func (b *Buffer) Memory() (*Memory, error) {
	if b == nil {
		return nil, fmt.Errorf("pjrt: buffer memory: %w: nil buffer", ErrHostData)
	}
	c, a := b.dev.client, b.st.api
	if err := a.need(fnBufferMemory); err != nil {
		return nil, err
	}
	done, err := c.use("buffer memory")
	if err != nil {
		return nil, err
	}
	defer done()
	if !b.st.enter() {
		return nil, fmt.Errorf("pjrt: buffer memory: buffer %w", b.st.closedError())
	}
	defer b.st.exit()
	args := C.PJRT_Buffer_Memory_Args{buffer: b.st.c}
	if err := a.toError(fmt.Sprintf("memory of %s", b), ErrDevice, C.xm_Buffer_Memory(a.p, &args)); err != nil {
		return nil, unimplementedAsKind(err)
	}
	return c.memoryOf(args.memory)
}

// CopyToMemory copies the buffer into memory m of the same client (PJRT_Buffer_CopyToMemory),
// like jax.device_put(x, s.with_memory_kind(kind)): to another kind of memory of the buffer's
// device, or to a memory of another device. It returns a new buffer, on the buffer's device if
// it addresses m (else on m's first device), which the caller must Close; it becomes ready when
// the copy is done, and the source stays valid. A nil or foreign memory gives an error wrapping
// ErrDevice, a closed buffer one wrapping ErrClosed, and a plugin without the function (or one
// refusing this copy as unimplemented) one wrapping ErrUnimplemented. Some plugins refuse to
// copy a buffer into the memory it is already in.
func (b *Buffer) CopyToMemory(m *Memory) (*Buffer, error) {
	if b == nil {
		return nil, fmt.Errorf("pjrt: copy to memory: %w: nil buffer", ErrHostData)
	}
	c, a := b.dev.client, b.st.api
	if err := c.checkMemory(m, nil); err != nil {
		return nil, fmt.Errorf("pjrt: copy %s to memory: %w", b, err)
	}
	dev := b.dev
	if !m.addressableBy(dev) {
		if len(m.devices) == 0 {
			return nil, fmt.Errorf("pjrt: copy %s to memory: %w: no device addresses memory %s", b, ErrDevice, m)
		}
		dev = m.devices[0]
	}
	if err := a.need(fnBufferCopyToMemory); err != nil {
		return nil, err
	}
	done, err := c.use("copy to memory")
	if err != nil {
		return nil, err
	}
	defer done()
	if !b.st.enter() {
		return nil, fmt.Errorf("pjrt: copy to memory: buffer %w", b.st.closedError())
	}
	defer b.st.exit()
	args := C.PJRT_Buffer_CopyToMemory_Args{buffer: b.st.c, dst_memory: m.c}
	if err := a.toError(fmt.Sprintf("copy %s to %s", b, m), ErrDevice, C.xm_Buffer_CopyToMemory(a.p, &args)); err != nil {
		return nil, unimplementedAsKind(err)
	}
	if args.dst_buffer == nil {
		return nil, fmt.Errorf("pjrt: copy %s to %s: %w: the plugin returned no buffer", b, m, ErrDevice)
	}
	return newBuffer(dev, b.shape, args.dst_buffer), nil
}

// InputMemoryKinds returns the kind of memory each parameter of the program is expected in
// (PJRT_Executable_ParameterMemoryKinds), e.g. "pinned_host" for an argument a JAX program takes
// with memory_kind="pinned_host". A plugin without the function (the API 0.81 CPU plugin) gives
// an error wrapping ErrUnimplemented, a closed executable one wrapping ErrClosed.
func (e *Executable) InputMemoryKinds() ([]string, error) {
	return e.memoryKinds(fnExecutableInputKinds)
}

// OutputMemoryKinds returns the kind of memory each result of the program is made in
// (PJRT_Executable_OutputMemoryKinds): "device" unless the program places a result elsewhere,
// e.g. with a JAX out_sharding of memory_kind="pinned_host". A plugin without the function, or
// one answering Unimplemented (the API 0.81 CPU plugin: "GetOutputMemoryKinds is not
// supported."), gives an error wrapping ErrUnimplemented; a closed executable, one wrapping
// ErrClosed.
func (e *Executable) OutputMemoryKinds() ([]string, error) {
	return e.memoryKinds(fnExecutableOutputKinds)
}

// memoryKinds runs PJRT_Executable_ParameterMemoryKinds or PJRT_Executable_OutputMemoryKinds.
func (e *Executable) memoryKinds(f fn) ([]string, error) {
	if e == nil {
		return nil, fmt.Errorf("pjrt: memory kinds: %w: nil executable", ErrExecute)
	}
	if err := e.client.api.need(f); err != nil {
		return nil, err
	}
	if !e.gate.Enter() {
		return nil, fmt.Errorf("pjrt: memory kinds: executable %w", ErrClosed)
	}
	defer e.gate.Exit()
	var kinds []string
	err := e.withExecutable("memory kinds", func(a *api, x *C.PJRT_Executable) error {
		var (
			list  **C.char
			sizes *C.size_t
			n     C.size_t
		)
		if f == fnExecutableInputKinds {
			args := C.PJRT_Executable_ParameterMemoryKinds_Args{executable: x}
			if err := a.toError("parameter memory kinds", ErrCompile, C.xm_Executable_ParameterMemoryKinds(a.p, &args)); err != nil {
				return unimplementedAsKind(err)
			}
			list, sizes, n = (**C.char)(unsafe.Pointer(args.memory_kinds)), (*C.size_t)(unsafe.Pointer(args.memory_kind_sizes)), args.num_parameters
		} else {
			args := C.PJRT_Executable_OutputMemoryKinds_Args{executable: x}
			if err := a.toError("output memory kinds", ErrCompile, C.xm_Executable_OutputMemoryKinds(a.p, &args)); err != nil {
				return unimplementedAsKind(err)
			}
			list, sizes, n = (**C.char)(unsafe.Pointer(args.memory_kinds)), (*C.size_t)(unsafe.Pointer(args.memory_kind_sizes)), args.num_outputs
		}
		ks, ss := cSlice(list, n), cSlice(sizes, n)
		if len(ks) != int(n) || len(ss) != int(n) {
			return fmt.Errorf("pjrt: memory kinds: %w: the plugin reported %d kinds without the list", ErrCompile, n)
		}
		kinds = make([]string, int(n))
		for i := range kinds {
			kinds[i] = goString(ks[i], ss[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return kinds, nil
}

// MemoryKinds returns the kinds of the device's memories, the default memory's first, so that a
// Device is a mesh.MemoryKindsDevice: mesh.NamedSharding.WithMemoryKind checks a kind against
// it. It is nil when the plugin does not list memories or the device is not addressable from
// this process (mesh then assumes JAX's three kinds).
func (d *Device) MemoryKinds() []string {
	list, err := d.Memories()
	if err != nil {
		return nil
	}
	def, err := d.DefaultMemory()
	if err != nil {
		return nil
	}
	kinds := []string{def.Kind()}
	for _, m := range list {
		if !slices.Contains(kinds, m.Kind()) {
			kinds = append(kinds, m.Kind())
		}
	}
	return kinds
}
