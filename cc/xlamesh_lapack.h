// The LAPACK kernels JAX's CPU programs call (stablehlo.custom_call @lapack_*_ffi), as XLA FFI
// handlers with jaxlib's signatures, over a LAPACK library loaded at run time, and their
// registration with a plugin through PJRT's FFI extension.
//
// jaxlib compiles these kernels into its Python extension and registers them with the XLA it
// embeds; a PJRT plugin has none of them. xlamesh registers its own with the plugin's XLA
// (PJRT_FFI_Extension.register_handler) before the plugin compiles anything. The library is
// any LAPACK with the Fortran ABI and 32-bit integers: the scipy-openblas32 wheel's (symbols
// prefixed scipy_) or a system liblapack (no prefix).
#ifndef XLAMESH_LAPACK_H_
#define XLAMESH_LAPACK_H_

#include <stddef.h>

#include "xla/pjrt/c/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

// xm_lapack_load opens the LAPACK library at path (once per process: a second call with
// another path fails) and looks up the routines the kernels call. It returns NULL or a
// malloc'd message.
char* xm_lapack_load(const char* path);

// xm_lapack_target_count and xm_lapack_target name the FFI targets served, in a fixed order;
// xm_lapack_target_ready reports whether the loaded library has the routine target i calls.
int xm_lapack_target_count(void);
const char* xm_lapack_target(int i);
int xm_lapack_target_ready(int i);

// xm_ffi_can_register reports whether the plugin has PJRT's FFI extension with
// register_handler.
int xm_ffi_can_register(const PJRT_Api* api);

// xm_lapack_register registers target i's handler with the plugin's XLA for platform "cpu". It
// returns NULL or a malloc'd message (the plugin's error, or why it was not tried).
char* xm_lapack_register(const PJRT_Api* api, int i);

#ifdef __cplusplus
}
#endif

#endif  // XLAMESH_LAPACK_H_
