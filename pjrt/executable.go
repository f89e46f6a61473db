package pjrt

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	gpjrt "github.com/gomlx/gopjrt/pjrt"
)

// Partitioner selects how XLA partitions an SPMD program.
type Partitioner uint8

const (
	// Shardy partitions modules annotated with the sdy dialect (sdy.mesh, sdy.sharding). It is the
	// default: the zero CompileOptions.Partitioner means Shardy.
	Shardy Partitioner = iota + 1
	// GSPMD partitions modules annotated with mhlo.sharding strings.
	GSPMD
)

// String returns "Shardy" or "GSPMD".
func (p Partitioner) String() string {
	switch p {
	case 0, Shardy:
		return "Shardy"
	case GSPMD:
		return "GSPMD"
	}
	return fmt.Sprintf("Partitioner(%d)", uint8(p))
}

// CompileOptions says how to compile a program. The zero value compiles for one partition on the
// client's first addressable device with Shardy.
type CompileOptions struct {
	// NumPartitions is the number of SPMD partitions (devices). Zero means len(DeviceAssignment),
	// or 1 when that is empty too.
	NumPartitions int
	// DeviceAssignment lists the global device ids of partitions 0..NumPartitions-1 (for a mesh:
	// its device ids in mesh order). Nil means the client's first NumPartitions addressable devices.
	DeviceAssignment []int
	// Partitioner is Shardy (also the zero value) or GSPMD. It must match the module's annotations.
	Partitioner Partitioner
}

// Executable is a compiled program bound to its devices. Safe for concurrent Execute calls.
type Executable struct {
	client  *Client
	g       *gpjrt.LoadedExecutable
	devices []*Device
	info    executableInfo
	mu      sync.RWMutex // held shared by Execute, exclusively by Close
	closed  bool
}

// Compile compiles StableHLO MLIR text for the devices in opts.DeviceAssignment.
//
// gopjrt v0.10.0 always sets use_shardy_partitioner for SPMD programs; for a module annotated
// only with mhlo.sharding XLA then turns Shardy off and runs GSPMD itself. Compile therefore
// checks that the module's annotations match opts.Partitioner instead of trusting a flag.
func (c *Client) Compile(mlir string, opts CompileOptions) (*Executable, error) {
	n := opts.NumPartitions
	if n == 0 {
		n = max(1, len(opts.DeviceAssignment))
	}
	if n < 0 {
		return nil, fmt.Errorf("pjrt: compile: %w: %d partitions", ErrDevice, n)
	}
	assignment := slices.Clone(opts.DeviceAssignment)
	if assignment == nil {
		if n > len(c.addressable) {
			return nil, fmt.Errorf("pjrt: compile: %w: %d partitions but the client has %d addressable devices",
				ErrDevice, n, len(c.addressable))
		}
		for _, d := range c.addressable[:n] {
			assignment = append(assignment, d.ID())
		}
	}
	if len(assignment) != n {
		return nil, fmt.Errorf("pjrt: compile: %w: device assignment %v has %d devices for %d partitions",
			ErrDevice, assignment, len(assignment), n)
	}
	devices := make([]*Device, n)
	for i, id := range assignment {
		d, err := c.Device(id)
		if err != nil {
			return nil, fmt.Errorf("pjrt: compile: device assignment position %d: %w", i, err)
		}
		if j := slices.Index(assignment[:i], id); j >= 0 {
			return nil, fmt.Errorf("pjrt: compile: %w: device %d appears at positions %d and %d of the device assignment",
				ErrDevice, id, j, i)
		}
		if !d.IsAddressable() {
			return nil, fmt.Errorf("pjrt: compile: %w: device %d is not addressable from process %d", ErrDevice, id, c.processIndex)
		}
		devices[i] = d
	}
	hasSdy, hasGSPMD := strings.Contains(mlir, "sdy."), strings.Contains(mlir, "mhlo.sharding")
	switch opts.Partitioner {
	case 0, Shardy:
		if hasGSPMD {
			return nil, fmt.Errorf("pjrt: compile: %w: the module has GSPMD mhlo.sharding annotations; compile it with Partitioner: GSPMD", ErrCompile)
		}
	case GSPMD:
		if hasSdy {
			return nil, fmt.Errorf("pjrt: compile: %w: the module has Shardy sdy annotations; compile it with Partitioner: Shardy", ErrCompile)
		}
	default:
		return nil, fmt.Errorf("pjrt: compile: %w: unknown partitioner %v", ErrCompile, opts.Partitioner)
	}

	done, err := c.use("compile")
	if err != nil {
		return nil, err
	}
	defer done()
	g, err := c.g.Compile().WithStableHLO([]byte(mlir)).WithShardy(n).WithDeviceAssignment(assignment).Done()
	if err != nil {
		return nil, wrapGopjrt("compile", ErrCompile, err)
	}
	info, err := readExecutableInfo(c.plugin.g, g)
	if err != nil {
		_ = g.Destroy()
		return nil, err
	}
	return &Executable{client: c, g: g, devices: devices, info: info}, nil
}

// Devices returns the executable's devices in device-assignment order: the order of Execute's
// argument and result lists.
func (e *Executable) Devices() []*Device { return slices.Clone(e.devices) }

// DeviceAssignment returns the global ids of Devices.
func (e *Executable) DeviceAssignment() []int {
	ids := make([]int, len(e.devices))
	for i, d := range e.devices {
		ids[i] = d.ID()
	}
	return ids
}

// NumPartitions returns the number of SPMD partitions the plugin compiled.
func (e *Executable) NumPartitions() int { return e.info.numPartitions }

// NumOutputs returns the number of results per device.
func (e *Executable) NumOutputs() int { return len(e.info.outputs) }

// OutputShapes returns the per-device (shard) shape of each result.
func (e *Executable) OutputShapes() []Shape {
	out := make([]Shape, len(e.info.outputs))
	for i, s := range e.info.outputs {
		out[i] = Shape{DType: s.DType, Dims: slices.Clone(s.Dims)}
	}
	return out
}

// Fingerprint returns the plugin's fingerprint of the compiled program, or "" if it has none.
func (e *Executable) Fingerprint() string { return e.info.fingerprint }

// ExecuteOption configures one Execute call.
type ExecuteOption func(*executeConfig)

type executeConfig struct{ donate []int }

// Donate lets the executable reuse the memory of the arguments at these positions (on every
// device). Donated buffers are closed by Execute, whether or not XLA reused them.
func Donate(argIndices ...int) ExecuteOption {
	return func(c *executeConfig) { c.donate = append(c.donate, argIndices...) }
}

// Execute runs the executable on all its devices. args[d] lists the arguments of device
// Devices()[d]; every device gets the same number of arguments, each on that device. It returns
// results[d][i], result i on device d, each a new Buffer the caller must Close.
func (e *Executable) Execute(args [][]*Buffer, opts ...ExecuteOption) ([][]*Buffer, error) {
	cfg := executeConfig{}
	for _, o := range opts {
		o(&cfg)
	}
	if len(args) != len(e.devices) {
		return nil, fmt.Errorf("pjrt: execute: %w: %d argument lists for %d devices", ErrExecute, len(args), len(e.devices))
	}
	numArgs := len(args[0])
	donated := make([]bool, numArgs)
	for _, a := range cfg.donate {
		if a < 0 || a >= numArgs {
			return nil, fmt.Errorf("pjrt: execute: %w: donated argument %d out of range [0, %d)", ErrExecute, a, numArgs)
		}
		donated[a] = true
	}
	flat := make([]*gpjrt.Buffer, 0, len(args)*numArgs)
	flatDonate := make([]bool, 0, len(args)*numArgs)
	var locked []*bufferState
	unlock := func() {
		for _, st := range locked {
			st.mu.RUnlock()
		}
	}
	var exclusive []*bufferState
	for d, list := range args {
		if len(list) != numArgs {
			unlock()
			return nil, fmt.Errorf("pjrt: execute: %w: device %d has %d arguments, device 0 has %d", ErrExecute, d, len(list), numArgs)
		}
		for i, b := range list {
			if b == nil {
				unlock()
				return nil, fmt.Errorf("pjrt: execute: %w: argument %d on device %d is nil", ErrExecute, i, d)
			}
			if b.dev != e.devices[d] {
				unlock()
				return nil, fmt.Errorf("pjrt: execute: %w: argument %d for position %d (device %d) is on device %d",
					ErrDevice, i, d, e.devices[d].ID(), b.dev.ID())
			}
			if slices.Contains(locked, b.st) || slices.Contains(exclusive, b.st) {
				if donated[i] {
					unlock()
					return nil, fmt.Errorf("pjrt: execute: %w: donated argument %d on device %d is passed twice", ErrExecute, i, d)
				}
			} else if donated[i] {
				exclusive = append(exclusive, b.st)
			} else {
				b.st.mu.RLock()
				locked = append(locked, b.st)
			}
			flat = append(flat, b.st.g)
			flatDonate = append(flatDonate, donated[i])
		}
	}
	defer unlock()
	for _, st := range exclusive {
		// A donated buffer must not be in use elsewhere; waiting for it could deadlock two calls
		// that donate each other's arguments, so fail instead.
		if !st.mu.TryLock() {
			return nil, fmt.Errorf("pjrt: execute: %w: a donated argument is in use by another call", ErrExecute)
		}
		defer st.mu.Unlock()
	}
	for _, st := range append(slices.Clone(locked), exclusive...) {
		if st.closed {
			return nil, fmt.Errorf("pjrt: execute: %w: an argument buffer is %w", ErrExecute, ErrClosed)
		}
	}

	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, fmt.Errorf("pjrt: execute: executable %w", ErrClosed)
	}
	done, err := e.client.use("execute")
	if err != nil {
		return nil, err
	}
	defer done()
	outs, err := e.g.Execute(flat...).SetDonate(flatDonate).Done()
	// gopjrt destroys donated inputs itself (also when it fails after running).
	for _, st := range exclusive {
		if !st.closed {
			st.closed = true
			liveBuffers.Add(-1)
		}
	}
	if err != nil {
		return nil, wrapGopjrt("execute", ErrExecute, err)
	}
	numOut := len(e.info.outputs)
	if len(outs) != numOut*len(e.devices) {
		for _, o := range outs {
			_ = o.Destroy()
		}
		return nil, fmt.Errorf("pjrt: execute: %w: got %d results, want %d per device on %d devices", ErrExecute, len(outs), numOut, len(e.devices))
	}
	results := make([][]*Buffer, len(e.devices))
	for d := range results {
		results[d] = make([]*Buffer, numOut)
		for i := range numOut {
			results[d][i] = newBuffer(e.devices[d], e.info.outputs[i], outs[d*numOut+i])
		}
	}
	return results, nil
}

// Close frees the executable. It waits for executions in flight, and is idempotent.
func (e *Executable) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return wrapGopjrt("destroy executable", ErrClosed, e.g.Destroy())
}
