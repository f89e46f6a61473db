package pjrt

// cc_sources.go fingerprints the C files of ../cc that cgo compiles here (see
// internal/ccsources); regenerate it after editing them.
//go:generate go run ./internal/ccsources/generate

/*
#cgo CFLAGS: -I${SRCDIR}/../cc -I${SRCDIR}/../cc/include -std=c11 -D_GNU_SOURCE
#cgo LDFLAGS: -ldl -lm
#include <stdlib.h>
#include "xlamesh_pjrt.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"unsafe"
)

// This file is the Go half of the cgo boundary: the plugin's function table and the one
// converter from PJRT_Error to a Go error. The C half is ../cc/xlamesh_pjrt.c.

// api is a loaded plugin's PJRT_Api table with what was read from it at load time.
type api struct {
	p            *C.PJRT_Api
	structSize   int
	major, minor int
	path         string
}

// fn names a function slot of PJRT_Api by its byte offset.
type fn struct {
	name   string
	offset uintptr
}

var apiTable C.PJRT_Api // only for unsafe.Offsetof

// The function slots the binding uses. required lists those a plugin must have to be loaded at
// all; the others are checked before each use (need) and give an error wrapping
// ErrUnimplemented when missing.
var (
	fnErrorDestroy            = fn{"PJRT_Error_Destroy", unsafe.Offsetof(apiTable.PJRT_Error_Destroy)}
	fnErrorMessage            = fn{"PJRT_Error_Message", unsafe.Offsetof(apiTable.PJRT_Error_Message)}
	fnErrorGetCode            = fn{"PJRT_Error_GetCode", unsafe.Offsetof(apiTable.PJRT_Error_GetCode)}
	fnPluginInitialize        = fn{"PJRT_Plugin_Initialize", unsafe.Offsetof(apiTable.PJRT_Plugin_Initialize)}
	fnPluginAttributes        = fn{"PJRT_Plugin_Attributes", unsafe.Offsetof(apiTable.PJRT_Plugin_Attributes)}
	fnEventDestroy            = fn{"PJRT_Event_Destroy", unsafe.Offsetof(apiTable.PJRT_Event_Destroy)}
	fnEventAwait              = fn{"PJRT_Event_Await", unsafe.Offsetof(apiTable.PJRT_Event_Await)}
	fnEventOnReady            = fn{"PJRT_Event_OnReady", unsafe.Offsetof(apiTable.PJRT_Event_OnReady)}
	fnBufferReadyEvent        = fn{"PJRT_Buffer_ReadyEvent", unsafe.Offsetof(apiTable.PJRT_Buffer_ReadyEvent)}
	fnDeviceDefaultMemory     = fn{"PJRT_Device_DefaultMemory", unsafe.Offsetof(apiTable.PJRT_Device_DefaultMemory)}
	fnClientCreateErrorBuffer = fn{"PJRT_Client_CreateErrorBuffer", unsafe.Offsetof(apiTable.PJRT_Client_CreateErrorBuffer)}
	fnClientCreate            = fn{"PJRT_Client_Create", unsafe.Offsetof(apiTable.PJRT_Client_Create)}
	fnClientDestroy           = fn{"PJRT_Client_Destroy", unsafe.Offsetof(apiTable.PJRT_Client_Destroy)}
	fnClientPlatformName      = fn{"PJRT_Client_PlatformName", unsafe.Offsetof(apiTable.PJRT_Client_PlatformName)}
	fnClientProcessIndex      = fn{"PJRT_Client_ProcessIndex", unsafe.Offsetof(apiTable.PJRT_Client_ProcessIndex)}
	fnClientPlatformVersion   = fn{"PJRT_Client_PlatformVersion", unsafe.Offsetof(apiTable.PJRT_Client_PlatformVersion)}
	fnClientDevices           = fn{"PJRT_Client_Devices", unsafe.Offsetof(apiTable.PJRT_Client_Devices)}
	fnClientAddressable       = fn{"PJRT_Client_AddressableDevices", unsafe.Offsetof(apiTable.PJRT_Client_AddressableDevices)}
	fnClientCompile           = fn{"PJRT_Client_Compile", unsafe.Offsetof(apiTable.PJRT_Client_Compile)}
	fnClientBufferFromHost    = fn{"PJRT_Client_BufferFromHostBuffer", unsafe.Offsetof(apiTable.PJRT_Client_BufferFromHostBuffer)}
	fnDescID                  = fn{"PJRT_DeviceDescription_Id", unsafe.Offsetof(apiTable.PJRT_DeviceDescription_Id)}
	fnDescProcessIndex        = fn{"PJRT_DeviceDescription_ProcessIndex", unsafe.Offsetof(apiTable.PJRT_DeviceDescription_ProcessIndex)}
	fnDescAttributes          = fn{"PJRT_DeviceDescription_Attributes", unsafe.Offsetof(apiTable.PJRT_DeviceDescription_Attributes)}
	fnDescKind                = fn{"PJRT_DeviceDescription_Kind", unsafe.Offsetof(apiTable.PJRT_DeviceDescription_Kind)}
	fnDescToString            = fn{"PJRT_DeviceDescription_ToString", unsafe.Offsetof(apiTable.PJRT_DeviceDescription_ToString)}
	fnDeviceGetDescription    = fn{"PJRT_Device_GetDescription", unsafe.Offsetof(apiTable.PJRT_Device_GetDescription)}
	fnDeviceIsAddressable     = fn{"PJRT_Device_IsAddressable", unsafe.Offsetof(apiTable.PJRT_Device_IsAddressable)}
	fnDeviceLocalHardwareID   = fn{"PJRT_Device_LocalHardwareId", unsafe.Offsetof(apiTable.PJRT_Device_LocalHardwareId)}
	fnDeviceMemoryStats       = fn{"PJRT_Device_MemoryStats", unsafe.Offsetof(apiTable.PJRT_Device_MemoryStats)}
	fnExecutableDestroy       = fn{"PJRT_Executable_Destroy", unsafe.Offsetof(apiTable.PJRT_Executable_Destroy)}
	fnExecutableNumPartitions = fn{"PJRT_Executable_NumPartitions", unsafe.Offsetof(apiTable.PJRT_Executable_NumPartitions)}
	fnExecutableNumOutputs    = fn{"PJRT_Executable_NumOutputs", unsafe.Offsetof(apiTable.PJRT_Executable_NumOutputs)}
	fnExecutableOutputTypes   = fn{"PJRT_Executable_OutputElementTypes", unsafe.Offsetof(apiTable.PJRT_Executable_OutputElementTypes)}
	fnExecutableOutputDims    = fn{"PJRT_Executable_OutputDimensions", unsafe.Offsetof(apiTable.PJRT_Executable_OutputDimensions)}
	fnExecutableFingerprint   = fn{"PJRT_Executable_Fingerprint", unsafe.Offsetof(apiTable.PJRT_Executable_Fingerprint)}
	fnExecutableOptimized     = fn{"PJRT_Executable_OptimizedProgram", unsafe.Offsetof(apiTable.PJRT_Executable_OptimizedProgram)}
	fnExecutableSerialize     = fn{"PJRT_Executable_Serialize", unsafe.Offsetof(apiTable.PJRT_Executable_Serialize)}
	fnExecutableDeserialize   = fn{"PJRT_Executable_DeserializeAndLoad", unsafe.Offsetof(apiTable.PJRT_Executable_DeserializeAndLoad)}
	fnExecutableMemoryStats   = fn{"PJRT_Executable_GetCompiledMemoryStats", unsafe.Offsetof(apiTable.PJRT_Executable_GetCompiledMemoryStats)}
	fnLoadedDestroy           = fn{"PJRT_LoadedExecutable_Destroy", unsafe.Offsetof(apiTable.PJRT_LoadedExecutable_Destroy)}
	fnLoadedGetExecutable     = fn{"PJRT_LoadedExecutable_GetExecutable", unsafe.Offsetof(apiTable.PJRT_LoadedExecutable_GetExecutable)}
	fnLoadedDevices           = fn{"PJRT_LoadedExecutable_AddressableDevices", unsafe.Offsetof(apiTable.PJRT_LoadedExecutable_AddressableDevices)}
	fnLoadedExecute           = fn{"PJRT_LoadedExecutable_Execute", unsafe.Offsetof(apiTable.PJRT_LoadedExecutable_Execute)}
	fnBufferDestroy           = fn{"PJRT_Buffer_Destroy", unsafe.Offsetof(apiTable.PJRT_Buffer_Destroy)}
	fnBufferToHost            = fn{"PJRT_Buffer_ToHostBuffer", unsafe.Offsetof(apiTable.PJRT_Buffer_ToHostBuffer)}

	fnDeviceMemories        = fn{"PJRT_Device_AddressableMemories", unsafe.Offsetof(apiTable.PJRT_Device_AddressableMemories)}
	fnMemoryID              = fn{"PJRT_Memory_Id", unsafe.Offsetof(apiTable.PJRT_Memory_Id)}
	fnMemoryKind            = fn{"PJRT_Memory_Kind", unsafe.Offsetof(apiTable.PJRT_Memory_Kind)}
	fnMemoryToString        = fn{"PJRT_Memory_ToString", unsafe.Offsetof(apiTable.PJRT_Memory_ToString)}
	fnMemoryDevices         = fn{"PJRT_Memory_AddressableByDevices", unsafe.Offsetof(apiTable.PJRT_Memory_AddressableByDevices)}
	fnBufferMemory          = fn{"PJRT_Buffer_Memory", unsafe.Offsetof(apiTable.PJRT_Buffer_Memory)}
	fnBufferCopyToMemory    = fn{"PJRT_Buffer_CopyToMemory", unsafe.Offsetof(apiTable.PJRT_Buffer_CopyToMemory)}
	fnExecutableOutputKinds = fn{"PJRT_Executable_OutputMemoryKinds", unsafe.Offsetof(apiTable.PJRT_Executable_OutputMemoryKinds)}
	fnExecutableInputKinds  = fn{"PJRT_Executable_ParameterMemoryKinds", unsafe.Offsetof(apiTable.PJRT_Executable_ParameterMemoryKinds)}
)

// required are the functions without which the binding cannot open a client, compile, move
// data or execute; a plugin lacking one is refused at load time.
var required = []fn{
	fnErrorDestroy, fnErrorMessage, fnErrorGetCode, fnPluginInitialize, fnEventDestroy, fnEventAwait,
	fnClientCreate, fnClientDestroy, fnClientPlatformName, fnClientProcessIndex, fnClientPlatformVersion,
	fnClientDevices, fnClientAddressable, fnClientCompile, fnClientBufferFromHost,
	fnDescID, fnDescProcessIndex, fnDescKind, fnDeviceGetDescription, fnDeviceIsAddressable,
	fnExecutableDestroy, fnExecutableNumOutputs, fnExecutableOutputTypes, fnExecutableOutputDims,
	fnLoadedDestroy, fnLoadedGetExecutable, fnLoadedExecute, fnBufferDestroy, fnBufferToHost,
}

// has reports whether the plugin's table has f: inside its struct_size and non-null.
func (a *api) has(f fn) bool { return C.xm_has(a.p, C.size_t(f.offset)) != 0 }

// need returns an error wrapping ErrUnimplemented when the plugin lacks f.
func (a *api) need(f fn) error {
	if a.has(f) {
		return nil
	}
	return fmt.Errorf("pjrt: plugin %s (PJRT C API %d.%d) does not implement %s: %w", a.path, a.major, a.minor, f.name, ErrUnimplemented)
}

// toError converts a PJRT_Error into an *Error of the given kind and destroys it; nil stays nil.
func (a *api) toError(op string, kind error, e *C.PJRT_Error) error {
	if e == nil {
		return nil
	}
	var code C.int
	var msg *C.char
	C.xm_error_take(a.p, e, &code, &msg)
	text := ""
	if msg != nil {
		text = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return &Error{Op: op, Code: Code(code), Msg: text, Kind: kind}
}

// awaitEvent waits for an event, destroys it and returns its error.
func (a *api) awaitEvent(op string, kind error, ev *C.PJRT_Event) error {
	if ev == nil {
		return nil
	}
	aw := C.PJRT_Event_Await_Args{event: ev}
	err := a.toError(op, kind, C.xm_Event_Await(a.p, &aw))
	a.destroyEvent(ev)
	return err
}

// destroyEvent frees an event without waiting for it.
func (a *api) destroyEvent(ev *C.PJRT_Event) {
	if ev == nil {
		return
	}
	d := C.PJRT_Event_Destroy_Args{event: ev}
	_ = a.toError("destroy event", nil, C.xm_Event_Destroy(a.p, &d))
}

// goString copies a (pointer, size) string owned by the plugin.
func goString(p *C.char, n C.size_t) string {
	if p == nil || n == 0 {
		return ""
	}
	return C.GoStringN(p, C.int(n))
}

// namedValues converts a PJRT_NamedValue list into Go values: string, int64, []int64, float32
// or bool.
func namedValues(list *C.PJRT_NamedValue, n C.size_t) map[string]any {
	out := make(map[string]any, int(n))
	if list == nil || n == 0 {
		return out
	}
	for _, v := range unsafe.Slice(list, int(n)) {
		name := goString(v.name, v.name_size)
		u := unsafe.Pointer(&v.anon0[0])
		switch v._type {
		case C.PJRT_NamedValue_kString:
			out[name] = goString(*(**C.char)(u), v.value_size)
		case C.PJRT_NamedValue_kInt64:
			out[name] = int64(*(*C.int64_t)(u))
		case C.PJRT_NamedValue_kInt64List:
			p := *(**C.int64_t)(u)
			list := make([]int64, int(v.value_size))
			if p != nil {
				for i, x := range unsafe.Slice(p, int(v.value_size)) {
					list[i] = int64(x)
				}
			}
			out[name] = list
		case C.PJRT_NamedValue_kFloat:
			out[name] = float32(*(*C.float)(u))
		case C.PJRT_NamedValue_kBool:
			out[name] = bool(*(*C.bool)(u))
		}
	}
	return out
}

// knownFunctions are every slot above, for Plugin.Has.
var knownFunctions = append(slices.Clone(required),
	fnPluginAttributes, fnDescAttributes, fnDescToString, fnDeviceLocalHardwareID, fnDeviceMemoryStats,
	fnExecutableNumPartitions, fnExecutableFingerprint, fnExecutableOptimized, fnExecutableSerialize,
	fnExecutableDeserialize, fnExecutableMemoryStats, fnEventOnReady, fnBufferReadyEvent, fnClientCreateErrorBuffer, fnDeviceDefaultMemory, fnLoadedDevices,
	fnDeviceMemories, fnMemoryID, fnMemoryKind, fnMemoryToString, fnMemoryDevices, fnBufferMemory,
	fnBufferCopyToMemory, fnExecutableOutputKinds, fnExecutableInputKinds)
