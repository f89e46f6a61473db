package pjrt

/*
#include <stdlib.h>
#include "xlamesh_pjrt.h"

// xm_execute and xm_buffer_destroy keep no Go pointer past the call and never call back into Go.
#cgo noescape xm_execute
#cgo nocallback xm_execute
#cgo noescape xm_buffer_destroy
#cgo nocallback xm_buffer_destroy
*/
import "C"

import (
	"context"
	"crypto/sha256"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"
	xmlir "github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/shapes"

	"github.com/xlamesh/xlamesh/internal/closegate"
)

// Partitioner selects how XLA partitions an SPMD program: mlir.Partitioner, the type lower
// writes modules for. It is passed to the compiler as the use_shardy_partitioner build option;
// it is never guessed from the program text.
type Partitioner = xmlir.Partitioner

// The partitioners (mlir.Shardy, mlir.GSPMD). The zero CompileOptions.Partitioner means Shardy.
const (
	Shardy = xmlir.Shardy
	GSPMD  = xmlir.GSPMD
)

// CompileOptions says how to compile a program. The zero value compiles for one partition on the
// client's first addressable device with Shardy.
type CompileOptions struct {
	// NumPartitions is the number of SPMD partitions (devices). Zero means len(DeviceAssignment),
	// or 1 when that is empty too.
	NumPartitions int
	// DeviceAssignment lists the global device ids of partitions 0..NumPartitions-1 (for a mesh:
	// its device ids in mesh order). Nil means the client's first NumPartitions addressable devices.
	// In a multi-process job (WithDistributed) it may name other processes' devices: see Compile.
	DeviceAssignment []int
	// Partitioner is Shardy (also the zero value) or GSPMD: the partitioner XLA runs. It must
	// match the module's annotations (sdy.* for Shardy, mhlo.sharding for GSPMD).
	Partitioner Partitioner
	// CompilerOptions are XLA options for this compile alone, as JAX's
	// jit(f).lower(x).compile(compiler_options={...}): XLA debug option names (for example
	// "xla_gpu_autotune_level") to a string, bool, int, int64 or float64. They travel in the
	// compile options (env_option_overrides), win over XLA_FLAGS and over xlamesh's own
	// defaults for this compile, and are part of the compile cache's key. XLA refuses a name it
	// does not know (ErrCompile); another value type is refused before the plugin sees it.
	CompilerOptions map[string]any
}

// Executable is a compiled program bound to its devices. Safe for concurrent Execute calls.
type Executable struct {
	client  *Client
	c       *C.PJRT_LoadedExecutable
	devices []*Device // the addressable devices of the assignment, in its order
	global  []int     // the global device assignment; nil when every device is addressable
	info    executableInfo
	// gate counts the calls using c; the last one to leave a closed executable destroys it
	// (package internal/closegate), so that Close never waits on a call and a call never waits on Close.
	gate     closegate.Gate
	closeErr error // the destroy's error, read after gate.wait
	// unfinished counts the executions started and not finished on every device (C side,
	// counted down by their completion callbacks); freed by a cleanup once e is unreachable and
	// the last of them has finished.
	unfinished *C.xm_unfinished
}

// executableInfo is the output signature of a compiled executable, per device.
type executableInfo struct {
	numPartitions int
	inputs        []Shape // per-device parameter shapes; nil when the plugin does not say
	outputs       []Shape
	fingerprint   string
}

var liveExecutables atomic.Int64

// LiveExecutables returns the number of executables compiled or loaded by this package and not
// yet closed: a leak check for tests.
func LiveExecutables() int64 { return liveExecutables.Load() }

// Compile compiles StableHLO MLIR text (or bytecode) for the devices in opts.DeviceAssignment.
// On a plugin older than PJRT API 0.MeshAxesReplicaGroupsMinor, JAX 0.12's mesh-axes replica
// groups are compiled as the dense groups they stand for (mlir.DenseReplicaGroups; groups it
// cannot rewrite fail with ErrCompile wrapping mlir.ErrReplicaGroups).
// With a persistent compile cache (WithCompileCache) a program compiled before by the same
// plugin for the same devices is loaded instead of compiled; see CompileStats.
//
// Multi-controller execution: in a job of several processes (WithDistributed) the assignment may
// include devices of other processes, as JAX's is global. Every process compiles the same program
// with the same global assignment; the executable runs on this process's devices of it
// (Devices), and Execute takes and returns one list per addressable device. Whether the plugin
// can is the plugin's to say: when it refuses, the error wraps ErrMultiController and the
// plugin's *Error and names the devices that are not addressable (the CPU plugins refuse:
// "Multiprocess computations aren't implemented on the CPU backend"). At least one device of the
// assignment must be addressable (else ErrDevice). Such programs bypass the compile cache.
//
// The plugin only ever sees a program mlir.Check has read: text is checked as it is; bytecode
// (a StableHLO portable artifact, such as a jax.export module) is read to text with
// mlir/bytecode.ToText, that text is checked, and that text, not the bytecode, is compiled.
// Bytecode the reader cannot read is refused with an error wrapping ErrCompile and
// bytecode.ErrBytecode or bytecode.ErrUnsupported; a program Check refuses, with an error
// wrapping ErrCompile and Check's sentinel.
func (c *Client) Compile(mlir string, opts CompileOptions) (*Executable, error) {
	if opts.Partitioner != 0 && opts.Partitioner != Shardy && opts.Partitioner != GSPMD {
		return nil, fmt.Errorf("pjrt: compile: %w: unknown partitioner %v", ErrCompile, opts.Partitioner)
	}
	n := opts.NumPartitions
	if n == 0 {
		n = max(1, len(opts.DeviceAssignment))
	}
	devices, err := c.assign(n, opts.DeviceAssignment, true)
	if err != nil {
		return nil, fmt.Errorf("pjrt: compile: %w", err)
	}
	assignment := deviceIDs(devices)
	local, remote := splitAddressable(devices)
	if len(local) == 0 {
		return nil, fmt.Errorf("pjrt: compile: %w: no device of the device assignment %v is addressable from process %d",
			ErrDevice, assignment, c.processIndex)
	}
	if len(mlir) == 0 {
		return nil, fmt.Errorf("pjrt: compile: %w: empty program", ErrCompile)
	}
	if err := checkCompilerOptions(opts.CompilerOptions); err != nil {
		return nil, err
	}
	options := compileOptionsProto(assignment, opts.Partitioner, c.api.minor, opts.CompilerOptions)

	done, err := c.use("compile")
	if err != nil {
		return nil, err
	}
	defer done()
	mlir, err = checkedProgram(mlir, n, c.api.minor)
	if err != nil {
		return nil, err
	}
	var key [sha256.Size]byte
	cached := c.cache != nil && len(remote) == 0
	if cached {
		key = c.cache.key(c, mlir, options, devices)
		if loaded := c.loadCached(key, options); loaded != nil {
			return c.newExecutable(loaded, devices)
		}
	}
	loaded, err := c.compile(mlir, options)
	if err != nil {
		if len(remote) > 0 {
			return nil, c.multiControllerError(remote, err)
		}
		return nil, err
	}
	if len(remote) > 0 {
		return c.newGlobalExecutable(loaded, local, assignment)
	}
	e, err := c.newExecutable(loaded, devices)
	if err != nil {
		return nil, err
	}
	if cached {
		c.storeCached(key, e)
	}
	return e, nil
}

// MeshAxesReplicaGroupsMinor is the oldest PJRT API minor version whose plugin is known to read
// JAX 0.12's mesh-axes replica groups (#stablehlo.replica_group_mesh_axes: the CPU plugin of
// API 0.115 does, that of API 0.81 does not); for older plugins Compile rewrites them as dense
// replica groups (mlir.DenseReplicaGroups).
const MeshAxesReplicaGroupsMinor = 115

// TwoBitMinor is the oldest PJRT API minor version whose plugins xlamesh lets compile programs
// on 2-bit integers, and transposes of 4-bit types: the pinned API 0.81 CPU plugin (XLA of 2024)
// aborts compiling a transpose of ui2[8,4] ("dims and input_strides_in_bytes must have equal
// sizes", an uncaught absl::StatusOr), and of i4, ui4 or f4E2M1FN [8,4] whenever the transpose is
// materialised (returned beside its operand, or twice; found with one device, 2026-11-28), while
// the API 0.115 one compiles and runs them all. Other 4-bit programs tried compile there.
// Versions between were not tried.
const TwoBitMinor = 115

// MemorySpacesMinor is the oldest PJRT API minor version whose plugins xlamesh lets compile
// programs that move values between memory spaces with annotate_device_placement calls, as
// jax.jit writes them for arguments or results in host memory and for jax.device_put inside a
// program: the API 0.81 CPU plugin has no implementation of the call ("No registered
// implementation for untyped custom call to annotate_device_placement", and in a partitioned
// program "Side-effect ops cannot be replicated"); the API 0.115 plugin runs it. A program whose
// arguments or results only carry mhlo.memory_kind compiles on both: the 0.81 plugin then makes
// its results in device memory, and says so (Buffer.Memory). Versions between were not tried.
const MemorySpacesMinor = 115

// memorySpaces matches what MemorySpacesMinor is about in MLIR text.
var memorySpaces = regexp.MustCompile(`annotate_device_placement`)

// twoBit matches a tensor type of 2-bit integers in MLIR text: tensor<i2>, tensor<4x8xui2>.
var twoBit = regexp.MustCompile(`[<x]u?i2>`)

// fourBitTranspose matches a transpose of a 4-bit type (i4, ui4, f4E2M1FN) in MLIR text, in the
// pretty or the generic form (one operation a line, as MLIR prints them).
var fourBitTranspose = regexp.MustCompile(`stablehlo\.transpose"?[^\n]*[<x](u?i4|f4E2M1FN)>`)

// checkedProgram returns the text to compile for a program given as text or bytecode, for n
// partitions, on a plugin of PJRT API minor version minor: the text itself, or the bytecode
// read as text; either way checked by mlir.Check for what XLA would misread or not survive,
// with mesh-axes replica groups written as dense ones for plugins too old to read them.
// Programs on 2-bit integers, and transposes of 4-bit types, are refused on plugins older than
// TwoBitMinor, programs that place
// values in memory spaces on plugins older than MemorySpacesMinor.
func checkedProgram(program string, n, minor int) (string, error) {
	if bytecode.IsBytecode(unsafe.Slice(unsafe.StringData(program), len(program))) {
		text, err := bytecode.ToText([]byte(program))
		if err != nil {
			return "", fmt.Errorf("pjrt: compile: %w: reading the MLIR bytecode as text: %w", ErrCompile, err)
		}
		if text == "" {
			return "", fmt.Errorf("pjrt: compile: %w: the MLIR bytecode reads as an empty program", ErrCompile)
		}
		program = text
	}
	if err := xmlir.Check(program, xmlir.Partitions(n)); err != nil {
		return "", fmt.Errorf("pjrt: compile: %w: %w", ErrCompile, err)
	}
	if minor < TwoBitMinor && twoBit.MatchString(program) {
		return "", fmt.Errorf("pjrt: compile: %w: the program has 2-bit integers (i2, ui2), and this plugin (PJRT API 0.%d) "+
			"aborts compiling some programs on them (a transpose of a ui2[8,4] kills the process); use a plugin of PJRT "+
			"API 0.%d or later, or 4-bit integers", ErrCompile, minor, TwoBitMinor)
	}
	if minor < TwoBitMinor && fourBitTranspose.MatchString(program) {
		return "", fmt.Errorf("pjrt: compile: %w: the program transposes a 4-bit type (i4, ui4, f4E2M1FN), and this plugin "+
			"(PJRT API 0.%d) aborts compiling such transposes (of an i4[8,4] returned beside its operand, it kills the "+
			"process); use a plugin of PJRT API 0.%d or later, or an 8-bit type", ErrCompile, minor, TwoBitMinor)
	}
	if minor < MemorySpacesMinor && memorySpaces.MatchString(program) {
		return "", fmt.Errorf("pjrt: compile: %w: %w: the program places values in memory spaces (%s), which this plugin "+
			"(PJRT API 0.%d) cannot compile (it has no implementation of annotate_device_placement); use a plugin "+
			"of PJRT API 0.%d or later",
			ErrCompile, ErrUnimplemented, memorySpaces.FindString(program), minor, MemorySpacesMinor)
	}
	if minor < MeshAxesReplicaGroupsMinor && xmlir.HasMeshAxesReplicaGroups(program) {
		dense, err := xmlir.DenseReplicaGroups(program)
		if err != nil {
			return "", fmt.Errorf("pjrt: compile: %w: the plugin (PJRT API 0.%d) reads only dense replica groups: %w", ErrCompile, minor, err)
		}
		program = dense
	}
	return program, nil
}

// compile runs PJRT_Client_Compile. The program is handed over NUL-terminated (the NUL not
// counted in code_size): XLA parses it with MLIR's lexer, which stops at a NUL and reads past
// the end of a buffer without one. Go pads most allocations with zeros, so this went unseen
// until the API 0.115 CPU plugin crashed on programs of exactly 8 bytes, whose allocation has
// no padding (FuzzCompile, "A0000000").
func (c *Client) compile(mlir string, options []byte) (*C.PJRT_LoadedExecutable, error) {
	code := make([]byte, len(mlir)+1)
	copy(code, mlir)
	format := []byte("mlir")
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&code[0])
	pin.Pin(&format[0])
	pin.Pin(&options[0])
	program := C.PJRT_Program{
		struct_size: C.PJRT_Program_STRUCT_SIZE,
		code:        (*C.char)(unsafe.Pointer(&code[0])), code_size: C.size_t(len(mlir)),
		format: (*C.char)(unsafe.Pointer(&format[0])), format_size: C.size_t(len(format)),
	}
	pin.Pin(&program)
	args := C.PJRT_Client_Compile_Args{
		client: c.c, program: &program,
		compile_options: (*C.char)(unsafe.Pointer(&options[0])), compile_options_size: C.size_t(len(options)),
	}
	c.stats.compiles.Add(1)
	if err := c.api.toError("compile", ErrCompile, C.xm_Client_Compile(c.api.p, &args)); err != nil {
		return nil, explainMissingHandler(err, c.plugin)
	}
	return args.executable, nil
}

// newExecutable wraps a loaded executable and reads its output signature.
func (c *Client) newExecutable(loaded *C.PJRT_LoadedExecutable, devices []*Device) (*Executable, error) {
	return c.newGlobalExecutable(loaded, devices, nil)
}

// newGlobalExecutable wraps a loaded executable of the global device assignment global (nil:
// the ids of devices) that runs on devices, the addressable ones.
func (c *Client) newGlobalExecutable(loaded *C.PJRT_LoadedExecutable, devices []*Device, global []int) (*Executable, error) {
	un := C.xm_unfinished_new()
	if un == nil {
		d := C.PJRT_LoadedExecutable_Destroy_Args{executable: loaded}
		_ = c.api.toError("destroy executable", nil, C.xm_LoadedExecutable_Destroy(c.api.p, &d))
		return nil, fmt.Errorf("pjrt: compile: %w: out of host memory", ErrCompile)
	}
	e := &Executable{client: c, c: loaded, devices: devices, global: global, unfinished: un}
	runtime.AddCleanup(e, func(un *C.xm_unfinished) { C.xm_unfinished_drop(un) }, un)
	e.gate.Release = e.destroy
	liveExecutables.Add(1)
	c.trackExecutable(e, true)
	info, err := e.readInfo()
	if err != nil {
		_ = e.Close()
		return nil, err
	}
	if c.api.has(fnExecutableOptimized) {
		code, format, err := e.optimizedProgram()
		if err == nil {
			info.inputs, err = parameterShapes(code, format)
		}
		if err != nil {
			_ = e.Close()
			return nil, fmt.Errorf("pjrt: compile: reading the program's parameters: %w", err)
		}
		if len(global) > 1 || len(devices) > 1 {
			if err := checkSubByteCollectives(code, format, info.numPartitions); err != nil {
				_ = e.Close()
				return nil, err
			}
		}
	}
	e.info = info
	return e, nil
}

// withExecutable calls f with the PJRT_Executable behind e, destroying it afterwards.
func (e *Executable) withExecutable(op string, f func(a *api, x *C.PJRT_Executable) error) error {
	a := e.client.api
	ge := C.PJRT_LoadedExecutable_GetExecutable_Args{loaded_executable: e.c}
	if err := a.toError(op, ErrCompile, C.xm_LoadedExecutable_GetExecutable(a.p, &ge)); err != nil {
		return err
	}
	defer func() {
		d := C.PJRT_Executable_Destroy_Args{executable: ge.executable}
		_ = a.toError("destroy executable", nil, C.xm_Executable_Destroy(a.p, &d))
	}()
	return f(a, ge.executable)
}

func (e *Executable) readInfo() (executableInfo, error) {
	info := executableInfo{numPartitions: len(e.devices)}
	if e.global != nil {
		info.numPartitions = len(e.global)
	}
	err := e.withExecutable("executable info", func(a *api, x *C.PJRT_Executable) error {
		no := C.PJRT_Executable_NumOutputs_Args{executable: x}
		if err := a.toError("executable outputs", ErrCompile, C.xm_Executable_NumOutputs(a.p, &no)); err != nil {
			return err
		}
		et := C.PJRT_Executable_OutputElementTypes_Args{executable: x}
		if err := a.toError("executable output types", ErrCompile, C.xm_Executable_OutputElementTypes(a.p, &et)); err != nil {
			return err
		}
		od := C.PJRT_Executable_OutputDimensions_Args{executable: x}
		if err := a.toError("executable output dimensions", ErrCompile, C.xm_Executable_OutputDimensions(a.p, &od)); err != nil {
			return err
		}
		n := int(no.num_outputs)
		if int(et.num_output_types) != n || int(od.num_outputs) != n {
			return fmt.Errorf("pjrt: executable info: %w: the plugin reported %d outputs, %d output types and %d output shapes",
				ErrCompile, n, et.num_output_types, od.num_outputs)
		}
		types := cSlice(et.output_types, et.num_output_types)
		ranks := cSlice(od.dim_sizes, od.num_outputs)
		total := 0
		for _, r := range ranks {
			total += int(r)
		}
		dims := cSlice(od.dims, C.size_t(total))
		info.outputs = make([]Shape, n)
		at := 0
		for i := range n {
			d := make([]int, int(ranks[i]))
			for j := range d {
				d[j] = int(dims[at+j])
			}
			at += len(d)
			info.outputs[i] = shapes.Make(dtypes.DType(types[i]), d...)
		}
		if a.has(fnExecutableNumPartitions) {
			np := C.PJRT_Executable_NumPartitions_Args{executable: x}
			if err := a.toError("executable partitions", ErrCompile, C.xm_Executable_NumPartitions(a.p, &np)); err != nil {
				return err
			}
			info.numPartitions = int(np.num_partitions)
		}
		if a.has(fnExecutableFingerprint) {
			fp := C.PJRT_Executable_Fingerprint_Args{executable: x}
			// Unimplemented on some plugins: the fingerprint then stays empty.
			if a.toError("fingerprint", nil, C.xm_Executable_Fingerprint(a.p, &fp)) == nil {
				info.fingerprint = goString(fp.executable_fingerprint, fp.executable_fingerprint_size)
			}
		}
		return nil
	})
	return info, err
}

// optimizedProgram returns the serialized optimized program of e and its format ("hlo" or
// "hlo_with_config").
func (e *Executable) optimizedProgram() ([]byte, string, error) {
	if err := e.client.api.need(fnExecutableOptimized); err != nil {
		return nil, "", err
	}
	var code []byte
	var format string
	err := e.withExecutable("optimized program", func(a *api, x *C.PJRT_Executable) error {
		program := (*C.PJRT_Program)(C.calloc(1, C.size_t(unsafe.Sizeof(C.PJRT_Program{}))))
		defer C.free(unsafe.Pointer(program))
		program.struct_size = C.PJRT_Program_STRUCT_SIZE
		op := C.PJRT_Executable_OptimizedProgram_Args{executable: x, program: program}
		// First call: the size; second call: the bytes.
		if err := a.toError("optimized program", ErrCompile, C.xm_Executable_OptimizedProgram(a.p, &op)); err != nil {
			return err
		}
		buf := C.malloc(C.size_t(max(1, int(program.code_size))))
		defer C.free(buf)
		program.code = (*C.char)(buf)
		if err := a.toError("optimized program", ErrCompile, C.xm_Executable_OptimizedProgram(a.p, &op)); err != nil {
			return err
		}
		code = C.GoBytes(buf, C.int(program.code_size))
		format = goString(program.format, program.format_size)
		return nil
	})
	return code, format, err
}

// Serialize returns the plugin's serialization of the compiled program, which
// Client.LoadExecutable turns back into an executable on a client of the same plugin version.
// A plugin without PJRT_Executable_Serialize gives an error wrapping ErrUnimplemented.
func (e *Executable) Serialize() ([]byte, error) {
	if err := e.client.api.need(fnExecutableSerialize); err != nil {
		return nil, err
	}
	if !e.gate.Enter() {
		return nil, fmt.Errorf("pjrt: serialize: executable %w", ErrClosed)
	}
	defer e.gate.Exit()
	var out []byte
	err := e.withExecutable("serialize", func(a *api, x *C.PJRT_Executable) error {
		s := C.PJRT_Executable_Serialize_Args{executable: x}
		if err := a.toError("serialize executable", ErrCompile, C.xm_Executable_Serialize(a.p, &s)); err != nil {
			return err
		}
		defer C.xm_serialized_free(&s)
		out = C.GoBytes(unsafe.Pointer(s.serialized_bytes), C.int(s.serialized_bytes_size))
		return nil
	})
	return out, err
}

// LoadExecutable turns the bytes of Executable.Serialize back into an executable. With a
// DeviceAssignment in opts it runs on those devices, which are checked as Compile checks them
// (but must all be addressable: no multi-controller loads) and must number as many as the program's partitions (else ErrDevice); without one it runs on
// the devices it was compiled for. The bytes must come from the same plugin version; anything
// else gives an *Error matching ErrCompile, never a crash. A plugin without
// PJRT_Executable_DeserializeAndLoad gives an error wrapping ErrUnimplemented.
func (c *Client) LoadExecutable(serialized []byte, opts CompileOptions) (*Executable, error) {
	if err := c.api.need(fnExecutableDeserialize); err != nil {
		return nil, err
	}
	if len(serialized) == 0 {
		return nil, fmt.Errorf("pjrt: load executable: %w: no bytes", ErrCompile)
	}
	var devices []*Device
	var options []byte
	if opts.DeviceAssignment != nil || opts.NumPartitions != 0 {
		n := opts.NumPartitions
		if n == 0 {
			n = len(opts.DeviceAssignment)
		}
		var err error
		if devices, err = c.assign(n, opts.DeviceAssignment, false); err != nil {
			return nil, fmt.Errorf("pjrt: load executable: %w", err)
		}
		options = compileOptionsProto(deviceIDs(devices), opts.Partitioner, c.api.minor, nil)
	} else if err := c.api.need(fnLoadedDevices); err != nil {
		return nil, err
	}
	done, err := c.use("load executable")
	if err != nil {
		return nil, err
	}
	defer done()
	if options != nil {
		// Compile options given at load time override the executable's, partition count included,
		// so the program's own count is read from a load without them first.
		probe, err := c.deserialize(serialized, nil)
		if err != nil {
			return nil, err
		}
		n, err := c.numPartitions(probe)
		d := C.PJRT_LoadedExecutable_Destroy_Args{executable: probe}
		_ = c.api.toError("destroy executable", nil, C.xm_LoadedExecutable_Destroy(c.api.p, &d))
		if err != nil {
			return nil, err
		}
		if n != len(devices) {
			return nil, fmt.Errorf("pjrt: load executable: %w: the program was compiled for %d partitions, the device assignment has %d devices",
				ErrDevice, n, len(devices))
		}
	}
	loaded, err := c.deserialize(serialized, options)
	if err != nil {
		return nil, err
	}
	if devices == nil {
		if devices, err = c.loadedDevices(loaded); err != nil {
			d := C.PJRT_LoadedExecutable_Destroy_Args{executable: loaded}
			_ = c.api.toError("destroy executable", nil, C.xm_LoadedExecutable_Destroy(c.api.p, &d))
			return nil, err
		}
	}
	e, err := c.newExecutable(loaded, devices)
	if err != nil {
		return nil, err
	}
	if e.NumPartitions() != len(devices) {
		_ = e.Close()
		return nil, fmt.Errorf("pjrt: load executable: %w: the program was compiled for %d partitions, the device assignment has %d devices",
			ErrDevice, e.NumPartitions(), len(devices))
	}
	return e, nil
}

// assign checks a device assignment of n partitions (nil: the first n addressable devices) and
// returns its devices: each a device of the client, listed once, and addressable unless remote
// allows devices of other processes.
func (c *Client) assign(n int, assignment []int, remote bool) ([]*Device, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: %d partitions", ErrDevice, n)
	}
	if assignment == nil {
		if n > len(c.addressable) {
			return nil, fmt.Errorf("%w: %d partitions but the client has %d addressable devices", ErrDevice, n, len(c.addressable))
		}
		return slices.Clone(c.addressable[:n]), nil
	}
	if len(assignment) != n {
		return nil, fmt.Errorf("%w: device assignment %v has %d devices for %d partitions", ErrDevice, assignment, len(assignment), n)
	}
	devices := make([]*Device, n)
	for i, id := range assignment {
		d, err := c.Device(id)
		if err != nil {
			return nil, fmt.Errorf("device assignment position %d: %w", i, err)
		}
		if j := slices.Index(assignment[:i], id); j >= 0 {
			return nil, fmt.Errorf("%w: device %d appears at positions %d and %d of the device assignment", ErrDevice, id, j, i)
		}
		if !remote && !d.IsAddressable() {
			return nil, fmt.Errorf("%w: device %d is not addressable from process %d", ErrDevice, id, c.processIndex)
		}
		devices[i] = d
	}
	return devices, nil
}

// numPartitions returns a loaded executable's partition count.
func (c *Client) numPartitions(loaded *C.PJRT_LoadedExecutable) (int, error) {
	e := &Executable{client: c, c: loaded}
	n := 0
	err := e.withExecutable("executable partitions", func(a *api, x *C.PJRT_Executable) error {
		if err := a.need(fnExecutableNumPartitions); err != nil {
			return err
		}
		np := C.PJRT_Executable_NumPartitions_Args{executable: x}
		if err := a.toError("executable partitions", ErrCompile, C.xm_Executable_NumPartitions(a.p, &np)); err != nil {
			return err
		}
		n = int(np.num_partitions)
		return nil
	})
	return n, err
}

// loadedDevices returns the devices a loaded executable runs on, in its own order.
func (c *Client) loadedDevices(loaded *C.PJRT_LoadedExecutable) ([]*Device, error) {
	args := C.PJRT_LoadedExecutable_AddressableDevices_Args{executable: loaded}
	if err := c.api.toError("executable devices", ErrDevice, C.xm_LoadedExecutable_AddressableDevices(c.api.p, &args)); err != nil {
		return nil, err
	}
	var out []*Device
	for _, pd := range cSlice(args.addressable_devices, args.num_addressable_devices) {
		found := deviceOf(c.addressable, pd)
		if found == nil {
			return nil, fmt.Errorf("pjrt: load executable: %w: the executable runs on a device the client does not list", ErrDevice)
		}
		out = append(out, found)
	}
	return out, nil
}

func deviceIDs(devices []*Device) []int {
	ids := make([]int, len(devices))
	for i, d := range devices {
		ids[i] = d.ID()
	}
	return ids
}

// deserialize runs PJRT_Executable_DeserializeAndLoad with the given compile options (nil: the
// options stored with the executable).
func (c *Client) deserialize(serialized, options []byte) (*C.PJRT_LoadedExecutable, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&serialized[0])
	args := C.PJRT_Executable_DeserializeAndLoad_Args{
		client:                     c.c,
		serialized_executable:      (*C.char)(unsafe.Pointer(&serialized[0])),
		serialized_executable_size: C.size_t(len(serialized)),
	}
	if len(options) > 0 {
		pin.Pin(&options[0])
		args.overridden_serialized_compile_options = (*C.char)(unsafe.Pointer(&options[0]))
		args.overridden_serialized_compile_options_size = C.size_t(len(options))
	}
	if err := c.api.toError("load executable", ErrCompile, C.xm_Executable_DeserializeAndLoad(c.api.p, &args)); err != nil {
		return nil, err
	}
	return args.loaded_executable, nil
}

// Devices returns the executable's addressable devices in device-assignment order: the order of
// Execute's argument and result lists. For a program compiled over several processes' devices
// (see Compile) these are this process's devices of the assignment only.
func (e *Executable) Devices() []*Device { return slices.Clone(e.devices) }

// DeviceAssignment returns the global device assignment: the ids of Devices, and for a program
// compiled over several processes' devices, the other processes' devices in their places too.
func (e *Executable) DeviceAssignment() []int {
	if e.global != nil {
		return slices.Clone(e.global)
	}
	ids := make([]int, len(e.devices))
	for i, d := range e.devices {
		ids[i] = d.ID()
	}
	return ids
}

// NumPartitions returns the number of SPMD partitions the plugin compiled.
func (e *Executable) NumPartitions() int { return e.info.numPartitions }

// InputShapes returns the per-device (shard) shape of each parameter, as Execute checks its
// arguments against them; nil when the plugin cannot show its optimized program.
func (e *Executable) InputShapes() []Shape {
	if e.info.inputs == nil {
		return nil
	}
	return slices.Clone(e.info.inputs)
}

// NumOutputs returns the number of results per device.
func (e *Executable) NumOutputs() int { return len(e.info.outputs) }

// OutputShapes returns the per-device (shard) shape of each result.
func (e *Executable) OutputShapes() []Shape {
	return slices.Clone(e.info.outputs)
}

// Fingerprint returns the plugin's fingerprint of the compiled program, or "" if it has none.
func (e *Executable) Fingerprint() string { return e.info.fingerprint }

// ExecuteOption configures one Execute call.
type ExecuteOption func(*executeConfig)

type executeConfig struct{ donate []int }

// Donate lets the executable reuse the memory of the arguments at these positions (on every
// device). Donated buffers are closed by Execute, whether or not XLA reused them. An index out of
// range or given twice is an error wrapping ErrExecute.
func Donate(argIndices ...int) ExecuteOption {
	return func(c *executeConfig) { c.donate = append(c.donate, argIndices...) }
}

// Execute starts the executable on all its devices and returns without waiting for it, like
// JAX's asynchronous dispatch. args[d] lists the arguments of device Devices()[d]; every device
// gets the same number of arguments, each on that device and of the shape InputShapes gives.
// It returns results[d][i], result i on device d, each a new Buffer the caller must Close; the
// buffers become ready when the execution finishes (Buffer.Wait, or any copy to the host, waits
// for them, and another Execute consuming them waits inside XLA). An execution that fails after
// it started reports its error, an *Error matching ErrExecute, from Wait and CopyToHost of its
// results; the executable stays usable. At most the client's in-flight limit of executions run at
// once (WithMaxInFlight); Execute blocks until one finishes beyond that.
//
// Arguments that do not fit (count, element type, shape, device, closed or donated buffers) are
// rejected with ErrExecute, ErrDevice or ErrClosed before the plugin sees them.
func (e *Executable) Execute(args [][]*Buffer, opts ...ExecuteOption) ([][]*Buffer, error) {
	if e == nil {
		return nil, fmt.Errorf("pjrt: execute: %w: nil executable", ErrExecute)
	}
	var donate []int
	if len(opts) > 0 {
		cfg := new(executeConfig)
		for _, o := range opts {
			o(cfg)
		}
		donate = cfg.donate
	}
	if e.IsClosed() {
		return nil, fmt.Errorf("pjrt: execute: executable %w", ErrClosed)
	}
	if len(args) != len(e.devices) {
		return nil, fmt.Errorf("pjrt: execute: %w: %d argument lists for %d devices", ErrExecute, len(args), len(e.devices))
	}
	numArgs := len(args[0])
	if e.info.inputs != nil && numArgs != len(e.info.inputs) {
		return nil, fmt.Errorf("pjrt: execute: %w: %d arguments, the program takes %d", ErrExecute, numArgs, len(e.info.inputs))
	}
	var donatedBuf [8]bool
	var donated []bool
	if numArgs <= len(donatedBuf) {
		donated = donatedBuf[:numArgs]
	} else {
		donated = make([]bool, numArgs)
	}
	for _, a := range donate {
		if a < 0 || a >= numArgs {
			return nil, fmt.Errorf("pjrt: execute: %w: donated argument %d out of range [0, %d)", ErrExecute, a, numArgs)
		}
		if donated[a] {
			return nil, fmt.Errorf("pjrt: execute: %w: argument %d is donated twice", ErrExecute, a)
		}
		donated[a] = true
	}
	// Hold every argument for the call: shared, or exclusively when donated.
	var held heldSet
	defer held.release()
	for d, list := range args {
		if len(list) != numArgs {
			return nil, fmt.Errorf("pjrt: execute: %w: device %d has %d arguments, device 0 has %d", ErrExecute, d, len(list), numArgs)
		}
		for i, b := range list {
			if err := e.checkArgument(d, i, b); err != nil {
				return nil, err
			}
			if held.has(b.st) {
				if donated[i] {
					return nil, fmt.Errorf("pjrt: execute: %w: donated argument %d on device %d is passed twice", ErrExecute, i, d)
				}
				continue
			}
			if donated[i] {
				// A donated buffer must not be in use elsewhere; waiting for it could deadlock two
				// calls that donate each other's arguments, so fail instead.
				if !b.st.users.EnterExclusive() {
					if b.st.users.IsClosed() {
						return nil, fmt.Errorf("pjrt: execute: %w: an argument buffer is %w", ErrExecute, ErrClosed)
					}
					return nil, fmt.Errorf("pjrt: execute: %w: a donated argument is in use by another call", ErrExecute)
				}
				held.add(b.st, true, len(args)*numArgs)
			} else {
				if !b.st.enter() {
					return nil, fmt.Errorf("pjrt: execute: %w: an argument buffer is %w", ErrExecute, b.st.closedError())
				}
				held.add(b.st, false, len(args)*numArgs)
			}
		}
	}

	// The client first: while an execution holds the executable it holds the client too, so
	// that the executable's destroy, on the last call to leave it, runs before the client's.
	if err := e.client.enter("execute"); err != nil {
		return nil, err
	}
	defer e.client.exit()
	if !e.gate.Enter() {
		return nil, fmt.Errorf("pjrt: execute: executable %w", ErrClosed)
	}
	defer e.gate.Exit()
	outs, err := e.execute(args, donated)
	// A donated argument's memory belongs to the execution now (also when it failed after
	// starting); its handle is destroyed here.
	for i := range held.n {
		if a := held.at(i); a.exclusive {
			a.st.users.Close()
			if a.st.markDonated() {
				_ = a.st.api.toError("destroy donated buffer", nil, C.xm_buffer_destroy(a.st.api.p, a.st.c))
			}
		}
	}
	return outs, err
}

// checkArgument checks argument i of device position d against the executable.
func (e *Executable) checkArgument(d, i int, b *Buffer) error {
	if b == nil {
		return fmt.Errorf("pjrt: execute: %w: argument %d on device %d is nil", ErrExecute, i, d)
	}
	if b.dev != e.devices[d] {
		return fmt.Errorf("pjrt: execute: %w: argument %d for position %d (device %d) is on device %d",
			ErrDevice, i, d, e.devices[d].ID(), b.dev.ID())
	}
	if e.info.inputs != nil && !b.shape.Equal(e.info.inputs[i]) {
		return fmt.Errorf("pjrt: execute: %w: argument %d on device %d is %s, the program takes %s",
			ErrExecute, i, e.devices[d].ID(), b.shape.Aval(), e.info.inputs[i].Aval())
	}
	return nil
}

// execute makes the PJRT_LoadedExecutable_Execute call, in one cgo call (xm_execute), which also
// arranges for the execution's in-flight slot to be given back when every device has finished.
// The results are returned at once.
func (e *Executable) execute(args [][]*Buffer, donated []bool) ([][]*Buffer, error) {
	a, c := e.client.api, e.client
	nd, na, no := len(e.devices), len(donated), len(e.info.outputs)
	// One Go block holds the argument cells, the result cells, the non-donated indices and the
	// started flag, which xm_execute reads and writes during the call: on the stack for a small
	// call (xm_execute is noescape).
	var small [64]unsafe.Pointer
	var cells []unsafe.Pointer
	if need := nd*na + nd*no + na + 2; need <= len(small) {
		cells = small[:need]
	} else {
		cells = make([]unsafe.Pointer, need)
	}
	argCells, outCells := cells[:nd*na], cells[nd*na:nd*na+nd*no]
	keep := unsafe.Slice((*C.int64_t)(unsafe.Pointer(&cells[nd*na+nd*no])), na+1)
	started := (*C.int)(unsafe.Pointer(&cells[len(cells)-1]))
	numKeep := 0
	for i, d := range donated {
		if !d {
			keep[numKeep] = C.int64_t(i)
			numKeep++
		}
	}
	for d := range nd {
		for i, b := range args[d] {
			argCells[d*na+i] = unsafe.Pointer(b.st.c)
		}
	}
	err := a.toError("execute", ErrExecute, C.xm_execute(a.p, c.inflight, e.unfinished, e.c,
		(**C.PJRT_Buffer)(unsafe.Pointer(&cells[0])), C.size_t(nd), C.size_t(na), &keep[0], C.size_t(numKeep),
		(**C.PJRT_Buffer)(unsafe.Pointer(&cells[nd*na])), C.size_t(no), started))
	if *started == 0 {
		if err == nil {
			err = fmt.Errorf("pjrt: execute: %w: out of host memory", ErrExecute)
		}
		return nil, err
	}
	results := e.wrapResults(outCells)
	// With no results the error, if any, came back from the wait inside xm_execute; otherwise it
	// is in the results' buffers, where Wait and copies find it.
	return results, err
}

// wrapResults wraps the results of one execution (outCells[d*no + i], result i of device d) as
// Buffers, in few allocations for all of them: one block of Buffers, one of their states, the
// result lists, and one cleanup on the Buffers' block, which closes every state still open when
// no Buffer of the block is reachable (the states live apart, so that the cleanup's argument does
// not keep the Buffers alive).
func (e *Executable) wrapResults(outCells []unsafe.Pointer) [][]*Buffer {
	nd, no := len(e.devices), len(e.info.outputs)
	c := e.client
	results := make([][]*Buffer, nd)
	if no == 0 {
		return results
	}
	bufs := make([]Buffer, nd*no)
	states := make([]bufferState, nd*no)
	rows := make([]*Buffer, nd*no)
	for d := range results {
		results[d] = rows[d*no : (d+1)*no : (d+1)*no]
		for i := range no {
			k := d*no + i
			st := &states[k]
			st.client, st.api, st.c = c, c.api, (*C.PJRT_Buffer)(outCells[k])
			bufs[k] = Buffer{dev: e.devices[d], shape: e.info.outputs[i], st: st}
			rows[k] = &bufs[k]
		}
	}
	liveBuffers.Add(int64(len(states)))
	c.trackBuffers(states)
	runtime.AddCleanup(&bufs[0], closeStates, states)
	return results
}

// closeStates closes the buffers of a block whose Buffers are all unreachable.
func closeStates(states []bufferState) {
	for i := range states {
		_ = states[i].close()
	}
}

// IsClosed reports whether Close was called.
func (e *Executable) IsClosed() bool { return e.gate.IsClosed() }

// String names the executable in messages, e.g. "Executable(fingerprint 3f2a..., 8 devices)".
func (e *Executable) String() string {
	fp := e.info.fingerprint
	if fp == "" {
		fp = "none"
	}
	return fmt.Sprintf("Executable(fingerprint %s, %d devices)", fp, len(e.devices))
}

// Close is CloseContext bounded by CloseTimeout.
func (e *Executable) Close() error {
	ctx, cancel := closeContext()
	defer cancel()
	return e.CloseContext(ctx)
}

// CloseContext frees the executable. Later calls on it fail with ErrClosed at once, whether or
// not the close is done. An Execute call that has not returned (a program the plugin runs on
// the calling thread, or one waiting for a device, never ending for all PJRT can tell) keeps
// the executable: the last such call to return destroys it. Executions that Execute already
// returned from (a program on several devices runs on after Execute returns) do not hold it:
// the plugin keeps what they need. CloseContext waits, until ctx is done, for both the calls and
// the executions to end, and then returns a *StillRunningError (matching ErrStillRunning) that
// counts the calls and the executions still running. CloseContext never blocks other
// goroutines' calls. It is idempotent: a later call waits again, and returns nil (or the
// destroy's error) once the executable is destroyed and its executions have ended.
func (e *Executable) CloseContext(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("pjrt: close: %w", errNilContext)
	}
	e.gate.Close()
	if e.gate.Wait(ctx) && waitZero(ctx, e.Unfinished) {
		return e.closeErr
	}
	return fmt.Errorf("pjrt: close: %w", &StillRunningError{What: e.String(), Calls: e.gate.Calls(), Executions: e.Unfinished()})
}

// Unfinished returns the number of the executable's executions that have started and not
// finished on every device (those of Execute calls that have not returned included), also after
// Close.
func (e *Executable) Unfinished() int { return int(C.xm_unfinished_count(e.unfinished)) }

// waitZero polls n, with a growing pause of at most 20 ms, until it returns 0 (true) or ctx is
// done (false). Executions end in C callbacks, which do not call into Go to wake a waiter.
func waitZero(ctx context.Context, n func() int) bool {
	pause := 50 * time.Microsecond
	for n() > 0 {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return n() == 0
		case <-t.C:
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}

// destroy frees the PJRT executable; the gate runs it once, when it is closed and no call is
// inside.
func (e *Executable) destroy() {
	liveExecutables.Add(-1)
	e.client.trackExecutable(e, false)
	a := e.client.api
	d := C.PJRT_LoadedExecutable_Destroy_Args{executable: e.c}
	e.closeErr = a.toError("destroy executable", ErrClosed, C.xm_LoadedExecutable_Destroy(a.p, &d))
}
