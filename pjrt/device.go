package pjrt

// #include "xlamesh_pjrt.h"
import "C"

import (
	"fmt"
	"maps"
)

// Device is one device of a client, with what the plugin reports about it. It implements the
// mesh.Device interface (ID, ProcessIndex, Platform, Kind) and mesh's optional coordinate
// interface (Coords, CoreOnChip).
type Device struct {
	client *Client
	c      *C.PJRT_Device
	info   deviceInfo
	mem    deviceMemories // read by Client.readMemories when the client opens; then fixed
}

// deviceInfo is what the plugin reports about one device, read once when the client opens.
type deviceInfo struct {
	id, processIndex, localHardwareID int
	addressable                       bool
	kind, text                        string
	attributes                        map[string]any
}

func newDevice(c *Client, pd *C.PJRT_Device) (*Device, error) {
	a := c.api
	info := deviceInfo{localHardwareID: -1}
	gd := C.PJRT_Device_GetDescription_Args{device: pd}
	if err := a.toError("device description", ErrDevice, C.xm_Device_GetDescription(a.p, &gd)); err != nil {
		return nil, err
	}
	desc := gd.device_description
	id := C.PJRT_DeviceDescription_Id_Args{device_description: desc}
	if err := a.toError("device id", ErrDevice, C.xm_DeviceDescription_Id(a.p, &id)); err != nil {
		return nil, err
	}
	info.id = int(id.id)
	pi := C.PJRT_DeviceDescription_ProcessIndex_Args{device_description: desc}
	if err := a.toError("device process index", ErrDevice, C.xm_DeviceDescription_ProcessIndex(a.p, &pi)); err != nil {
		return nil, err
	}
	info.processIndex = int(pi.process_index)
	k := C.PJRT_DeviceDescription_Kind_Args{device_description: desc}
	if err := a.toError("device kind", ErrDevice, C.xm_DeviceDescription_Kind(a.p, &k)); err != nil {
		return nil, err
	}
	info.kind = goString(k.device_kind, k.device_kind_size)
	if a.has(fnDescToString) {
		s := C.PJRT_DeviceDescription_ToString_Args{device_description: desc}
		if err := a.toError("device string", ErrDevice, C.xm_DeviceDescription_ToString(a.p, &s)); err != nil {
			return nil, err
		}
		info.text = goString(s.to_string, s.to_string_size)
	}
	info.attributes = map[string]any{}
	if a.has(fnDescAttributes) {
		at := C.PJRT_DeviceDescription_Attributes_Args{device_description: desc}
		if err := a.toError("device attributes", ErrDevice, C.xm_DeviceDescription_Attributes(a.p, &at)); err != nil {
			return nil, err
		}
		info.attributes = namedValues(at.attributes, at.num_attributes)
	}
	ad := C.PJRT_Device_IsAddressable_Args{device: pd}
	if err := a.toError("device addressable", ErrDevice, C.xm_Device_IsAddressable(a.p, &ad)); err != nil {
		return nil, err
	}
	info.addressable = bool(ad.is_addressable)
	if info.addressable && a.has(fnDeviceLocalHardwareID) {
		lh := C.PJRT_Device_LocalHardwareId_Args{device: pd}
		if err := a.toError("device local hardware id", ErrDevice, C.xm_Device_LocalHardwareId(a.p, &lh)); err != nil {
			return nil, err
		}
		info.localHardwareID = int(lh.local_hardware_id)
	}
	return &Device{client: c, c: pd, info: info}, nil
}

// ID returns the device's global id (PJRT_DeviceDescription_Id).
func (d *Device) ID() int { return d.info.id }

// ProcessIndex returns the index of the process the device belongs to.
func (d *Device) ProcessIndex() int { return d.info.processIndex }

// Platform returns the lower-case platform name of the device's client, e.g. "cpu".
func (d *Device) Platform() string { return d.client.platform }

// Kind returns the device kind, e.g. "cpu" or "TPU v4".
func (d *Device) Kind() string { return d.info.kind }

// LocalHardwareID returns the device's id on its host, or -1 when it has none.
func (d *Device) LocalHardwareID() int { return d.info.localHardwareID }

// IsAddressable reports whether this process can place buffers on the device.
func (d *Device) IsAddressable() bool { return d.info.addressable }

// Attributes returns every attribute the plugin reports for the device (e.g. "coords",
// "core_on_chip" on TPUs, "compute_capability" on GPUs), as string, int64, []int64, float32 or bool.
func (d *Device) Attributes() map[string]any { return maps.Clone(d.info.attributes) }

// Coords returns the device's physical coordinates ("coords" attribute; TPUs), or nil.
func (d *Device) Coords() []int {
	list, _ := d.info.attributes["coords"].([]int64)
	if list == nil {
		return nil
	}
	out := make([]int, len(list))
	for i, x := range list {
		out[i] = int(x)
	}
	return out
}

// CoreOnChip returns the "core_on_chip" attribute (TPUs), or 0 when absent.
func (d *Device) CoreOnChip() int {
	v, _ := d.info.attributes["core_on_chip"].(int64)
	return int(v)
}

// SliceIndex returns the "slice_index" attribute (multi-slice TPUs), or the process index when absent.
func (d *Device) SliceIndex() int {
	if v, ok := d.info.attributes["slice_index"].(int64); ok {
		return int(v)
	}
	return d.info.processIndex
}

// NumAttributes returns how many attributes the plugin reported for the device.
func (d *Device) NumAttributes() int { return len(d.info.attributes) }

// String returns the plugin's description of the device, e.g. "CpuDevice(id=0)".
func (d *Device) String() string {
	if d.info.text != "" {
		return d.info.text
	}
	return fmt.Sprintf("Device(%s, id=%d)", d.client.platform, d.info.id)
}

// Client returns the client the device belongs to.
func (d *Device) Client() *Client { return d.client }

// MemoryStats is a device's allocator statistics (PJRT_Device_MemoryStats). Only BytesInUse is
// always set; a field the plugin did not report is -1.
type MemoryStats struct {
	BytesInUse, PeakBytesInUse, NumAllocs, LargestAllocSize, BytesLimit int64
	BytesReserved, PeakBytesReserved, BytesReservableLimit              int64
	LargestFreeBlockBytes, PoolBytes, PeakPoolBytes                     int64
}

// MemoryStats returns the device's allocator statistics. A plugin without them (the CPU plugins)
// gives an error wrapping ErrUnimplemented.
func (d *Device) MemoryStats() (MemoryStats, error) {
	a := d.client.api
	if err := a.need(fnDeviceMemoryStats); err != nil {
		return MemoryStats{}, err
	}
	done, err := d.client.use("memory stats")
	if err != nil {
		return MemoryStats{}, err
	}
	defer done()
	if !d.info.addressable {
		return MemoryStats{}, fmt.Errorf("pjrt: memory stats: %w: device %d is not addressable", ErrDevice, d.info.id)
	}
	s := C.PJRT_Device_MemoryStats_Args{device: d.c}
	if err := a.toError(fmt.Sprintf("memory stats of %s", d), ErrDevice, C.xm_Device_MemoryStats(a.p, &s)); err != nil {
		if e, ok := err.(*Error); ok && e.Code == Unimplemented {
			e.Kind = ErrUnimplemented
		}
		return MemoryStats{}, err
	}
	opt := func(v C.int64_t, set C.bool) int64 {
		if set {
			return int64(v)
		}
		return -1
	}
	return MemoryStats{
		BytesInUse:            int64(s.bytes_in_use),
		PeakBytesInUse:        opt(s.peak_bytes_in_use, s.peak_bytes_in_use_is_set),
		NumAllocs:             opt(s.num_allocs, s.num_allocs_is_set),
		LargestAllocSize:      opt(s.largest_alloc_size, s.largest_alloc_size_is_set),
		BytesLimit:            opt(s.bytes_limit, s.bytes_limit_is_set),
		BytesReserved:         opt(s.bytes_reserved, s.bytes_reserved_is_set),
		PeakBytesReserved:     opt(s.peak_bytes_reserved, s.peak_bytes_reserved_is_set),
		BytesReservableLimit:  opt(s.bytes_reservable_limit, s.bytes_reservable_limit_is_set),
		LargestFreeBlockBytes: opt(s.largest_free_block_bytes, s.largest_free_block_bytes_is_set),
		PoolBytes:             opt(s.pool_bytes, s.pool_bytes_is_set),
		PeakPoolBytes:         opt(s.peak_pool_bytes, s.peak_pool_bytes_is_set),
	}, nil
}
