package pjrt

import (
	"fmt"

	gopjrt "github.com/gomlx/gopjrt/pjrt"
)

// Device is one device of a client, with what the plugin reports about it. It implements the
// mesh.Device interface (ID, ProcessIndex, Platform, Kind) and mesh's optional coordinate
// interface (Coords, CoreOnChip).
type Device struct {
	client *Client
	g      *gopjrt.Device
	info   deviceInfo
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

// Coords returns the device's physical coordinates ("coords" attribute; TPUs), or nil.
func (d *Device) Coords() []int { return append([]int(nil), d.info.coords...) }

// CoreOnChip returns the "core_on_chip" attribute (TPUs), or 0 when absent.
func (d *Device) CoreOnChip() int { return d.info.coreOnChip }

// SliceIndex returns the "slice_index" attribute (multi-slice TPUs), or the process index when absent.
func (d *Device) SliceIndex() int {
	if d.info.hasSliceIndex {
		return d.info.sliceIndex
	}
	return d.info.processIndex
}

// NumAttributes returns how many attributes the plugin reported for the device.
func (d *Device) NumAttributes() int { return d.info.numAttributes }

// String returns the plugin's description of the device, e.g. "CpuDevice(id=0)".
func (d *Device) String() string {
	if d.info.text != "" {
		return d.info.text
	}
	return fmt.Sprintf("Device(%s, id=%d)", d.client.platform, d.info.id)
}

// Client returns the client the device belongs to.
func (d *Device) Client() *Client { return d.client }
