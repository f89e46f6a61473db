package pjrt

/*
#cgo CFLAGS: -I${SRCDIR}/../cc -I${SRCDIR}/../cc/include -std=c11 -D_GNU_SOURCE
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "xlamesh_pjrt.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"runtime"
	"unsafe"

	gopjrt "github.com/gomlx/gopjrt/pjrt"
)

// This file is the only place that reaches into gopjrt's handles. gopjrt v0.10.0 keeps its C
// pointers in unexported fields and exposes no accessor, and cgo types cannot cross package
// boundaries, so the pointers are read (never written) by reflection. The field paths are pinned
// to gopjrt v0.10.0 (go.mod); TestGopjrtLayout fails loudly if an upgrade moves them.

// cHandle reads the C pointer stored at the unexported field path of a gopjrt object.
func cHandle(obj any, path ...string) (unsafe.Pointer, error) {
	v := reflect.ValueOf(obj)
	for _, name := range path {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil, fmt.Errorf("pjrt: nil %s handle", reflect.TypeOf(obj))
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return nil, fmt.Errorf("pjrt: gopjrt %s: field path %v does not reach a struct", reflect.TypeOf(obj), path)
		}
		v = v.FieldByName(name)
		if !v.IsValid() {
			return nil, fmt.Errorf("pjrt: gopjrt %s has no field %q: gopjrt's layout changed; update pjrt/cbridge.go", reflect.TypeOf(obj), name)
		}
	}
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.UnsafePointer {
		return nil, fmt.Errorf("pjrt: gopjrt %s field %v is a %s, not a pointer", reflect.TypeOf(obj), path, v.Kind())
	}
	p := v.UnsafePointer()
	if p == nil {
		return nil, fmt.Errorf("pjrt: gopjrt %s field %v is nil (destroyed?)", reflect.TypeOf(obj), path)
	}
	return p, nil
}

func pluginAPI(p *gopjrt.Plugin) (*C.PJRT_Api, error) {
	h, err := cHandle(p, "api")
	return (*C.PJRT_Api)(h), err
}

// cError converts a message returned by the C shim (nil on success) into an *Error and frees it.
func cError(op string, kind error, msg *C.char, code C.int) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return &Error{Op: op, Code: Code(code), Msg: C.GoString(msg), Kind: kind}
}

// probe opens the library at path with the C shim and reads its PJRT API version without
// calling anything else in it, so a wrong file yields an error instead of a crash.
func probe(path string) (major, minor int, err error) {
	cPath := C.CString(path)
	defer C.free(unsafe.Pointer(cPath))
	var api *C.PJRT_Api
	var cMajor, cMinor, code C.int
	msg := C.xm_probe(cPath, &api, &cMajor, &cMinor, &code)
	if msg != nil {
		defer C.free(unsafe.Pointer(msg))
		text := C.GoString(msg)
		if code == C.XM_ERR_DLOPEN && !fileExists(path) {
			return 0, 0, fmt.Errorf("pjrt: plugin %s: %w (%s)", path, ErrPluginNotFound, text)
		}
		return 0, 0, fmt.Errorf("pjrt: plugin %s: %w: %s", path, ErrNotPlugin, text)
	}
	return int(cMajor), int(cMinor), nil
}

// deviceInfo is what the plugin reports about one device.
type deviceInfo struct {
	id, processIndex, localHardwareID int
	addressable                       bool
	kind, text                        string
	coords                            []int
	coreOnChip, sliceIndex            int
	hasCoreOnChip, hasSliceIndex      bool
	numAttributes                     int
}

func readDeviceInfo(p *gopjrt.Plugin, d *gopjrt.Device) (deviceInfo, error) {
	api, err := pluginAPI(p)
	if err != nil {
		return deviceInfo{}, err
	}
	h, err := cHandle(d, "cDevice")
	if err != nil {
		return deviceInfo{}, err
	}
	var out C.xm_device_info
	var code C.int
	msg := C.xm_device_info_get(api, (*C.PJRT_Device)(h), &out, &code)
	runtime.KeepAlive(d)
	if err := cError("device info", ErrDevice, msg, code); err != nil {
		return deviceInfo{}, err
	}
	info := deviceInfo{
		id:              int(out.id),
		processIndex:    int(out.process_index),
		localHardwareID: int(out.local_hardware_id),
		addressable:     out.addressable != 0,
		kind:            C.GoString(&out.kind[0]),
		text:            C.GoString(&out.to_string[0]),
		hasCoreOnChip:   out.has_core_on_chip != 0,
		coreOnChip:      int(out.core_on_chip),
		hasSliceIndex:   out.has_slice_index != 0,
		sliceIndex:      int(out.slice_index),
		numAttributes:   int(out.num_attributes),
	}
	for i := 0; i < int(out.num_coords); i++ {
		info.coords = append(info.coords, int(out.coords[i]))
	}
	return info, nil
}

// executableInfo is the output signature of a compiled executable, per device.
type executableInfo struct {
	numPartitions int
	outputs       []Shape
	fingerprint   string
}

func readExecutableInfo(p *gopjrt.Plugin, e *gopjrt.LoadedExecutable) (executableInfo, error) {
	api, err := pluginAPI(p)
	if err != nil {
		return executableInfo{}, err
	}
	h, err := cHandle(e, "wrapper", "c")
	if err != nil {
		return executableInfo{}, err
	}
	var out C.xm_executable_info
	var code C.int
	msg := C.xm_executable_info_get(api, (*C.PJRT_LoadedExecutable)(h), &out, &code)
	runtime.KeepAlive(e)
	if err := cError("executable info", ErrCompile, msg, code); err != nil {
		return executableInfo{}, err
	}
	defer C.xm_executable_info_free(&out)
	n := int(out.num_outputs)
	info := executableInfo{numPartitions: int(out.num_partitions), outputs: make([]Shape, n)}
	if out.fingerprint != nil {
		info.fingerprint = C.GoString(out.fingerprint)
	}
	if n > 0 {
		types := unsafe.Slice(out.element_types, n)
		ranks := unsafe.Slice(out.ranks, n)
		total := 0
		for _, r := range ranks {
			total += int(r)
		}
		var dims []C.int64_t
		if total > 0 {
			dims = unsafe.Slice(out.dims, total)
		}
		at := 0
		for i := range n {
			d := make([]int, int(ranks[i]))
			for j := range d {
				d[j] = int(dims[at+j])
			}
			at += len(d)
			info.outputs[i] = Shape{DType: DType(types[i]), Dims: d}
		}
	}
	return info, nil
}

// readOptimizedProgram returns the serialized optimized program of e and its format.
func readOptimizedProgram(p *gopjrt.Plugin, e *gopjrt.LoadedExecutable) ([]byte, string, error) {
	api, err := pluginAPI(p)
	if err != nil {
		return nil, "", err
	}
	h, err := cHandle(e, "wrapper", "c")
	if err != nil {
		return nil, "", err
	}
	var code, format *C.char
	var size C.size_t
	var errCode C.int
	msg := C.xm_executable_optimized_program(api, (*C.PJRT_LoadedExecutable)(h), &code, &size, &format, &errCode)
	runtime.KeepAlive(e)
	if err := cError("optimized program", ErrCompile, msg, errCode); err != nil {
		return nil, "", err
	}
	defer C.free(unsafe.Pointer(code))
	defer C.free(unsafe.Pointer(format))
	return C.GoBytes(unsafe.Pointer(code), C.int(size)), C.GoString(format), nil
}
