package pjrt

/*
#include <stdlib.h>
#include "xlamesh_pjrt.h"

PJRT_Error* xm_kv_get(PJRT_KeyValueGetCallback_Args* args);
PJRT_Error* xm_kv_try_get(PJRT_KeyValueTryGetCallback_Args* args);
PJRT_Error* xm_kv_put(PJRT_KeyValuePutCallback_Args* args);
int xm_kv_exchange(void* user_arg, const char* key, const char* value, const char* missing, char* got,
                   size_t cap, char* msg, size_t msg_cap);
int xm_kv_concurrent(void* user_arg, int threads, int rounds, int timeout_ms, char* msg, size_t cap);
*/
import "C"

import (
	"errors"
	"runtime/cgo"
	"time"
	"unsafe"

	"github.com/xlamesh/xlamesh/pjrt/kv"
)

// setKeyValueCallbacks points the create args' callbacks at the C trampolines of kv_bridge.c,
// with a C word holding the store's handle as their user argument; the caller frees it with
// C.free after destroying the client.
func setKeyValueCallbacks(args *C.PJRT_Client_Create_Args, h cgo.Handle) unsafe.Pointer {
	arg := C.malloc(C.size_t(unsafe.Sizeof(C.uintptr_t(0))))
	*(*C.uintptr_t)(arg) = C.uintptr_t(h)
	args.kv_get_callback = C.PJRT_KeyValueGetCallback(C.xm_kv_get)
	args.kv_get_user_arg = arg
	args.kv_try_get_callback = C.PJRT_KeyValueTryGetCallback(C.xm_kv_try_get)
	args.kv_try_get_user_arg = arg
	args.kv_put_callback = C.PJRT_KeyValuePutCallback(C.xm_kv_put)
	args.kv_put_user_arg = arg
	return arg
}

// kvResult hands a value or an error back to C: *value is malloc'd (freed by the plugin through
// the deleter the trampoline sets), or *code/*msg describe the failure (msg malloc'd).
func kvResult(value []byte, err error, notFound C.int, cValue **C.char, cSize *C.size_t, code *C.int, msg **C.char) {
	if err != nil {
		*code = C.PJRT_Error_Code_INTERNAL
		if errors.Is(err, kv.ErrKeyNotFound) {
			*code = notFound
		}
		*msg = C.CString(err.Error())
		return
	}
	if cValue == nil { // a put: nothing to hand back
		return
	}
	*cValue = (*C.char)(C.CBytes(append(value, 0)))
	*cSize = C.size_t(len(value))
}

//export xmGoKVGet
func xmGoKVGet(h C.uintptr_t, key *C.char, keySize C.size_t, timeoutMs C.int, value **C.char, size *C.size_t, code *C.int, msg **C.char) {
	store := cgo.Handle(h).Value().(kv.Store)
	v, err := store.Get(C.GoStringN(key, C.int(keySize)), time.Duration(timeoutMs)*time.Millisecond)
	kvResult(v, err, C.PJRT_Error_Code_DEADLINE_EXCEEDED, value, size, code, msg)
}

//export xmGoKVTryGet
func xmGoKVTryGet(h C.uintptr_t, key *C.char, keySize C.size_t, value **C.char, size *C.size_t, code *C.int, msg **C.char) {
	store := cgo.Handle(h).Value().(kv.Store)
	v, err := store.TryGet(C.GoStringN(key, C.int(keySize)))
	kvResult(v, err, C.PJRT_Error_Code_NOT_FOUND, value, size, code, msg)
}

//export xmGoKVPut
func xmGoKVPut(h C.uintptr_t, key *C.char, keySize C.size_t, value *C.char, valueSize C.size_t, code *C.int, msg **C.char) {
	store := cgo.Handle(h).Value().(kv.Store)
	err := store.Put(C.GoStringN(key, C.int(keySize)), C.GoBytes(unsafe.Pointer(value), C.int(valueSize)))
	kvResult(nil, err, C.PJRT_Error_Code_INTERNAL, nil, nil, code, msg)
}

// kvBridgeExchange drives the C callbacks the way a GPU plugin does (put, blocking get, try-get
// of a missing key) against store, for the bridge's test: the CPU plugins never call them. It
// returns the value read back and the PJRT error code of the failed try-get (0 if it succeeded).
func kvBridgeExchange(store kv.Store, key, value, missing string) (string, Code, error) {
	h := cgo.NewHandle(store)
	defer h.Delete()
	var args C.PJRT_Client_Create_Args
	arg := setKeyValueCallbacks(&args, h)
	defer C.free(arg)
	ck, cv, cm := C.CString(key), C.CString(value), C.CString(missing)
	defer C.free(unsafe.Pointer(ck))
	defer C.free(unsafe.Pointer(cv))
	defer C.free(unsafe.Pointer(cm))
	got := (*C.char)(C.calloc(256, 1))
	defer C.free(unsafe.Pointer(got))
	msg := (*C.char)(C.calloc(256, 1))
	defer C.free(unsafe.Pointer(msg))
	code := C.xm_kv_exchange(arg, ck, cv, cm, got, 256, msg, 256)
	if code < 0 {
		return "", 0, errors.New(C.GoString(msg))
	}
	return C.GoString(got), Code(code), nil
}

// kvBridgeConcurrent calls the C callbacks against store from threads C threads at once, as a
// plugin's worker threads do: each thread, in each of rounds rounds, puts its key, waits with a
// blocking get (timeout) for the next thread's key, try-gets a missing key (NotFound) and, in the
// first round, gets it with a 20 ms timeout (DeadlineExceeded); every value read is freed through
// the deleter the callback set. It returns the first failure.
func kvBridgeConcurrent(store kv.Store, threads, rounds int, timeout time.Duration) error {
	h := cgo.NewHandle(store)
	defer h.Delete()
	var args C.PJRT_Client_Create_Args
	arg := setKeyValueCallbacks(&args, h)
	defer C.free(arg)
	msg := (*C.char)(C.calloc(512, 1))
	defer C.free(unsafe.Pointer(msg))
	if C.xm_kv_concurrent(arg, C.int(threads), C.int(rounds), C.int(timeout.Milliseconds()), msg, 512) != 0 {
		return errors.New(C.GoString(msg))
	}
	return nil
}
