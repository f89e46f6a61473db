package pjrt

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrMultiController is wrapped by Compile's error when the plugin refuses a device assignment
// that includes devices of other processes (multi-controller execution); the error names them.
// The plugin's own *Error is wrapped too.
var ErrMultiController = errors.New("multi-controller compile refused by the plugin")

// NotAddressableError says which devices of a device assignment are not addressable from this
// process. Compile's ErrMultiController error wraps one; match it with errors.As.
type NotAddressableError struct {
	Process int   // this process's index
	Devices []int // the global ids of the devices of other processes, in assignment order
}

// Error lists the devices.
func (e *NotAddressableError) Error() string {
	return fmt.Sprintf("devices %v of the device assignment are not addressable from process %d", e.Devices, e.Process)
}

// splitAddressable splits devices into the addressable ones and the others, keeping their order.
func splitAddressable(devices []*Device) (local, remote []*Device) {
	for _, d := range devices {
		if d.IsAddressable() {
			local = append(local, d)
		} else {
			remote = append(remote, d)
		}
	}
	return local, remote
}

// multiControllerError wraps the plugin's refusal of a program over other processes' devices.
func (c *Client) multiControllerError(remote []*Device, err error) error {
	na := &NotAddressableError{Process: c.processIndex, Devices: deviceIDs(remote)}
	return fmt.Errorf("pjrt: compile: %w: the plugin %s cannot compile for devices of other processes: %w: %w",
		ErrMultiController, filepath.Base(c.plugin.Path()), na, err)
}
