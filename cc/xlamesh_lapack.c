// xlamesh_lapack.c: see xlamesh_lapack.h.
//
// Each handler decodes XLA's call frame as jaxlib's kernel of the same name declares it
// (jaxlib/cpu/lapack_kernels.cc): the operands and results, the attributes (single characters
// as u8 scalars), matrices in the last two dimensions stored column-major (the custom call's
// operand_layouts), the leading dimensions a batch. It checks what it decodes (a wrong frame
// is an error the call returns, never a bad read) and calls the routine once per matrix.
#include "xlamesh_lapack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla/ffi/api/c_api.h"
#include "xlamesh_pjrt.h"

// PJRT's FFI extension (PJRT_Extension_Type_FFI) and its register_handler arguments, restated
// field for field as the plugins xlamesh supports read them: the CPU plugins of API 0.81 and
// 0.115 both read the target name and its size at offsets 8 and 16, the handler (a typed
// XLA_FFI_Handler*) at 24, the platform name and its size at 32 and 40, the traits at 48, and
// want a struct_size of at least 52 (read from their machine code). Copies of XLA's
// pjrt_c_api_ffi_extension.h from 2025 put an int api_version before the handler instead; a
// plugin of that layout would take the handler from the wrong field, so xlamesh does not vendor
// that header.
typedef struct {
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  void* handler;
  const char* platform_name;
  size_t platform_name_size;
  uint32_t traits;
} xm_ffi_register_args;
#define XM_FFI_REGISTER_ARGS_SIZE (offsetof(xm_ffi_register_args, traits) + sizeof(uint32_t))

typedef struct {
  size_t struct_size;
  PJRT_Extension_Type type;
  PJRT_Extension_Base* next;
  void* type_id_register;
  void* user_data_add;
  PJRT_Error* (*register_handler)(xm_ffi_register_args* args);
} xm_ffi_extension;
#define XM_FFI_EXTENSION_SIZE (offsetof(xm_ffi_extension, register_handler) + sizeof(void*))

// lapack_errorf returns a malloc'd message formatted like printf.
static char* lapack_errorf(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  if (n < 0) n = 0;
  char* msg = malloc((size_t)n + 1);
  if (msg == NULL) return NULL;
  va_start(ap, format);
  vsnprintf(msg, (size_t)n + 1, format, ap);
  va_end(ap);
  return msg;
}

// ---- The library ----

// Fortran ABI, 32-bit integers; the trailing size_t are the lengths of the character
// arguments that gfortran-compiled routines take after the others (C routines ignore them).
typedef void potrf_fn(const char* uplo, const int* n, void* a, const int* lda, int* info, size_t);
typedef void trsm_fn(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
                     const int* n, const void* alpha, const void* a, const int* lda, void* b, const int* ldb,
                     size_t, size_t, size_t, size_t);

// The element types, in the order of the routines' s, d, c, z prefixes.
enum { XM_S, XM_D, XM_C, XM_Z, XM_NTYPES };
static const char xm_prefix[XM_NTYPES] = {'s', 'd', 'c', 'z'};
static const XLA_FFI_DataType xm_dtype[XM_NTYPES] = {XLA_FFI_DataType_F32, XLA_FFI_DataType_F64,
                                                     XLA_FFI_DataType_C64, XLA_FFI_DataType_C128};
static const size_t xm_size[XM_NTYPES] = {4, 8, 8, 16};

static struct {
  pthread_mutex_t mu;
  void* handle;
  char* path;
  potrf_fn* potrf[XM_NTYPES];
  trsm_fn* trsm[XM_NTYPES];
} lib = {PTHREAD_MUTEX_INITIALIZER};

// lookup finds routine (e.g. "spotrf") in h: scipy-openblas's scipy_spotrf_, else spotrf_.
static void* lookup(void* h, const char* routine) {
  char name[64];
  snprintf(name, sizeof name, "scipy_%s_", routine);
  void* f = dlsym(h, name);
  if (f != NULL) return f;
  snprintf(name, sizeof name, "%s_", routine);
  return dlsym(h, name);
}

char* xm_lapack_load(const char* path) {
  pthread_mutex_lock(&lib.mu);
  char* err = NULL;
  if (lib.handle != NULL) {
    if (strcmp(lib.path, path) != 0) {
      err = lapack_errorf("LAPACK %s is loaded in this process; cannot load %s too", lib.path, path);
    }
    pthread_mutex_unlock(&lib.mu);
    return err;
  }
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char* e = dlerror();
    err = lapack_errorf("%s", e != NULL ? e : path);
    pthread_mutex_unlock(&lib.mu);
    return err;
  }
  int found = 0;
  for (int t = 0; t < XM_NTYPES; t++) {
    char routine[16];
    snprintf(routine, sizeof routine, "%cpotrf", xm_prefix[t]);
    lib.potrf[t] = (potrf_fn*)lookup(h, routine);
    snprintf(routine, sizeof routine, "%ctrsm", xm_prefix[t]);
    lib.trsm[t] = (trsm_fn*)lookup(h, routine);
    found += (lib.potrf[t] != NULL) + (lib.trsm[t] != NULL);
  }
  if (found == 0) {
    dlclose(h);
    memset(lib.potrf, 0, sizeof lib.potrf);
    memset(lib.trsm, 0, sizeof lib.trsm);
    err = lapack_errorf("%s has none of the LAPACK routines xlamesh calls (spotrf_ or scipy_spotrf_, ...)", path);
    pthread_mutex_unlock(&lib.mu);
    return err;
  }
  lib.handle = h;
  lib.path = strdup(path);
  pthread_mutex_unlock(&lib.mu);
  return NULL;
}

// ---- Decoding the call frame ----

// ffi_error returns an XLA FFI error with a formatted message (XLA copies it).
static XLA_FFI_Error* ffi_error(const XLA_FFI_Api* api, XLA_FFI_Error_Code code, const char* format, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(msg, sizeof msg, format, ap);
  va_end(ap);
  XLA_FFI_Error_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  a.message = msg;
  a.errc = code;
  return api->XLA_FFI_Error_Create(&a);
}

// answer_metadata answers XLA's question, asked through a metadata extension in the call frame
// when a handler is registered, of which FFI version the handler was built for: the older of
// this header's and the plugin's (the handlers use nothing newer than either). It reports
// whether the frame was such a question.
static int answer_metadata(XLA_FFI_CallFrame* frame) {
  for (XLA_FFI_InternalExtension* e = frame->extension_start; e != NULL; e = e->next) {
    if (e->type != XLA_FFI_Extension_Metadata) continue;
    XLA_FFI_Metadata* m = ((XLA_FFI_Metadata_Extension*)e)->metadata;
    if (m == NULL) return 1;
    int minor = XLA_FFI_API_MINOR;
    if (frame->api != NULL && frame->api->api_version.major_version == XLA_FFI_API_MAJOR &&
        frame->api->api_version.minor_version < minor) {
      minor = frame->api->api_version.minor_version;
    }
    m->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    m->api_version.extension_start = NULL;
    m->api_version.major_version = XLA_FFI_API_MAJOR;
    m->api_version.minor_version = minor;
    m->traits = 0;
    return 1;
  }
  return 0;
}

// A matrix operand or result: its buffer, and the batch and matrix dimensions.
typedef struct {
  XLA_FFI_Buffer* buf;
  int64_t batch;  // the product of the leading dimensions
  int64_t rows, cols;
} matrix;

// buffer returns argument (ret = 0) or result (ret = 1) i of the frame, or NULL.
static XLA_FFI_Buffer* buffer(XLA_FFI_CallFrame* f, int ret, int64_t i) {
  if (ret) {
    if (i >= f->rets.size || f->rets.types[i] != XLA_FFI_RetType_BUFFER) return NULL;
    return (XLA_FFI_Buffer*)f->rets.rets[i];
  }
  if (i >= f->args.size || f->args.types[i] != XLA_FFI_ArgType_BUFFER) return NULL;
  return (XLA_FFI_Buffer*)f->args.args[i];
}

// as_matrix reads b as a batch of matrices of type dt; it returns an error for XLA, or NULL.
static XLA_FFI_Error* as_matrix(XLA_FFI_CallFrame* f, const char* target, const char* what, XLA_FFI_Buffer* b,
                                XLA_FFI_DataType dt, matrix* m) {
  if (b == NULL) {
    return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: %s is missing or not a buffer", target, what);
  }
  if (b->dtype != dt) {
    return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: %s has element type %d, want %d", target,
                     what, (int)b->dtype, (int)dt);
  }
  if (b->rank < 2) {
    return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: %s has rank %lld, want a matrix or a batch of them",
                     target, what, (long long)b->rank);
  }
  m->buf = b;
  m->batch = 1;
  for (int64_t i = 0; i < b->rank - 2; i++) m->batch *= b->dims[i];
  m->rows = b->dims[b->rank - 2];
  m->cols = b->dims[b->rank - 1];
  if (m->rows > INT32_MAX || m->cols > INT32_MAX) {
    return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "%s: %s is %lldx%lld; LAPACK with 32-bit integers takes at most %d rows and columns", target, what,
                     (long long)m->rows, (long long)m->cols, INT32_MAX);
  }
  return NULL;
}

// char_attr reads the u8 attribute name (a LAPACK character flag) into *c, checking it is one
// of allowed.
static XLA_FFI_Error* char_attr(XLA_FFI_CallFrame* f, const char* target, const char* name, const char* allowed,
                                char* c) {
  for (int64_t i = 0; i < f->attrs.size; i++) {
    XLA_FFI_ByteSpan* n = f->attrs.names[i];
    if (n->len != strlen(name) || memcmp(n->ptr, name, n->len) != 0) continue;
    if (f->attrs.types[i] != XLA_FFI_AttrType_SCALAR) break;
    XLA_FFI_Scalar* s = (XLA_FFI_Scalar*)f->attrs.attrs[i];
    if (s->dtype != XLA_FFI_DataType_U8 && s->dtype != XLA_FFI_DataType_S8) break;
    *c = *(const char*)s->value;
    if (*c == 0 || strchr(allowed, *c) == NULL) {
      return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: attribute %s is %d, want one of %s", target,
                       name, (int)(unsigned char)*c, allowed);
    }
    return NULL;
  }
  return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: no u8 attribute %s", target, name);
}

// copy_in copies the operand into the result when XLA did not alias them.
static void copy_in(const matrix* in, matrix* out, size_t elem) {
  if (in->buf->data == out->buf->data) return;
  memcpy(out->buf->data, in->buf->data, (size_t)(in->batch * in->rows * in->cols) * elem);
}

// ---- potrf: Cholesky factorization ----

// lapack_?potrf_ffi(x) -> (x_out, info), attribute uplo: x_out's uplo triangle holds the
// factor of each matrix, info each one's LAPACK info (0, or the order of the first minor that
// is not positive definite).
static XLA_FFI_Error* potrf(XLA_FFI_CallFrame* f, int t) {
  if (answer_metadata(f) || f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  char target[32];
  snprintf(target, sizeof target, "lapack_%cpotrf_ffi", xm_prefix[t]);
  if (lib.potrf[t] == NULL) {
    return ffi_error(f->api, XLA_FFI_Error_Code_UNIMPLEMENTED, "%s: LAPACK %s has no %cpotrf", target, lib.path != NULL ? lib.path : "(none loaded)",
                     xm_prefix[t]);
  }
  matrix x, out;
  XLA_FFI_Error* err;
  if ((err = as_matrix(f, target, "operand x", buffer(f, 0, 0), xm_dtype[t], &x)) != NULL) return err;
  if ((err = as_matrix(f, target, "result x_out", buffer(f, 1, 0), xm_dtype[t], &out)) != NULL) return err;
  XLA_FFI_Buffer* info = buffer(f, 1, 1);
  if (info == NULL || info->dtype != XLA_FFI_DataType_S32) {
    return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: result info is missing or not s32", target);
  }
  int64_t ninfo = 1;
  for (int64_t i = 0; i < info->rank; i++) ninfo *= info->dims[i];
  if (x.rows != x.cols || out.rows != x.rows || out.cols != x.cols || out.batch != x.batch || ninfo != x.batch) {
    return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "%s: want square matrices x and x_out of the same shape and one info per matrix", target);
  }
  char uplo;
  if ((err = char_attr(f, target, "uplo", "LU", &uplo)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int n = (int)x.rows;
  int lda = n > 1 ? n : 1;
  int32_t* infos = (int32_t*)info->data;
  char* a = (char*)out.buf->data;
  size_t stride = (size_t)n * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    int inf = 0;
    if (n > 0) lib.potrf[t](&uplo, &n, a + (size_t)b * stride, &lda, &inf, 1);
    infos[b] = inf;
  }
  return NULL;
}

static XLA_FFI_Error* spotrf(XLA_FFI_CallFrame* f) { return potrf(f, XM_S); }
static XLA_FFI_Error* dpotrf(XLA_FFI_CallFrame* f) { return potrf(f, XM_D); }
static XLA_FFI_Error* cpotrf(XLA_FFI_CallFrame* f) { return potrf(f, XM_C); }
static XLA_FFI_Error* zpotrf(XLA_FFI_CallFrame* f) { return potrf(f, XM_Z); }

// ---- trsm: triangular solve ----

// lapack_?trsm_ffi(x, y[, alpha]) -> y_out, attributes side, uplo, trans_x, diag: y_out is the
// solution of op(x) a = alpha y (side L) or a op(x) = alpha y (side R), matrix by matrix, x
// triangular. alpha is 1 unless the (older, 2024) form passes it as a third operand.
static XLA_FFI_Error* trsm(XLA_FFI_CallFrame* f, int t) {
  if (answer_metadata(f) || f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  char target[32];
  snprintf(target, sizeof target, "lapack_%ctrsm_ffi", xm_prefix[t]);
  if (lib.trsm[t] == NULL) {
    return ffi_error(f->api, XLA_FFI_Error_Code_UNIMPLEMENTED, "%s: LAPACK %s has no %ctrsm", target, lib.path != NULL ? lib.path : "(none loaded)",
                     xm_prefix[t]);
  }
  matrix x, y, out;
  XLA_FFI_Error* err;
  if ((err = as_matrix(f, target, "operand x", buffer(f, 0, 0), xm_dtype[t], &x)) != NULL) return err;
  if ((err = as_matrix(f, target, "operand y", buffer(f, 0, 1), xm_dtype[t], &y)) != NULL) return err;
  if ((err = as_matrix(f, target, "result y_out", buffer(f, 1, 0), xm_dtype[t], &out)) != NULL) return err;
  char side, uplo, trans, diag;
  if ((err = char_attr(f, target, "side", "LR", &side)) != NULL) return err;
  if ((err = char_attr(f, target, "uplo", "LU", &uplo)) != NULL) return err;
  if ((err = char_attr(f, target, "trans_x", "NTC", &trans)) != NULL) return err;
  if ((err = char_attr(f, target, "diag", "NU", &diag)) != NULL) return err;
  int64_t k = side == 'L' ? y.rows : y.cols;
  if (x.rows != k || x.cols != k || x.batch != y.batch || out.rows != y.rows || out.cols != y.cols ||
      out.batch != y.batch) {
    return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "%s: want x of %lldx%lld matrices for y's, as many of each, and y_out shaped as y", target,
                     (long long)k, (long long)k);
  }
  double one[2] = {1, 0};
  float onef[2] = {1, 0};
  const void* alpha = (t == XM_S || t == XM_C) ? (const void*)onef : (const void*)one;
  if (f->args.size > 2) {
    XLA_FFI_Buffer* a = buffer(f, 0, 2);
    if (a == NULL || a->dtype != xm_dtype[t] || a->rank != 0) {
      return ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: operand alpha is not a scalar of x's type",
                       target);
    }
    alpha = a->data;
  }
  copy_in(&y, &out, xm_size[t]);
  int m = (int)y.rows, n = (int)y.cols;
  if (m == 0 || n == 0) return NULL;
  int lda = (int)k > 1 ? (int)k : 1;
  int ldb = m;
  size_t xs = (size_t)k * (size_t)k * xm_size[t];
  size_t ys = (size_t)m * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < y.batch; b++) {
    lib.trsm[t](&side, &uplo, &trans, &diag, &m, &n, alpha, (const char*)x.buf->data + (size_t)b * xs, &lda,
                (char*)out.buf->data + (size_t)b * ys, &ldb, 1, 1, 1, 1);
  }
  return NULL;
}

static XLA_FFI_Error* strsm(XLA_FFI_CallFrame* f) { return trsm(f, XM_S); }
static XLA_FFI_Error* dtrsm(XLA_FFI_CallFrame* f) { return trsm(f, XM_D); }
static XLA_FFI_Error* ctrsm(XLA_FFI_CallFrame* f) { return trsm(f, XM_C); }
static XLA_FFI_Error* ztrsm(XLA_FFI_CallFrame* f) { return trsm(f, XM_Z); }

// ---- The targets and their registration ----

static const struct {
  const char* name;
  XLA_FFI_Handler* handler;
  int type;
  int routine;  // 0 potrf, 1 trsm
} targets[] = {
    {"lapack_spotrf_ffi", spotrf, XM_S, 0}, {"lapack_dpotrf_ffi", dpotrf, XM_D, 0},
    {"lapack_cpotrf_ffi", cpotrf, XM_C, 0}, {"lapack_zpotrf_ffi", zpotrf, XM_Z, 0},
    {"lapack_strsm_ffi", strsm, XM_S, 1},   {"lapack_dtrsm_ffi", dtrsm, XM_D, 1},
    {"lapack_ctrsm_ffi", ctrsm, XM_C, 1},   {"lapack_ztrsm_ffi", ztrsm, XM_Z, 1},
};

int xm_lapack_target_count(void) { return (int)(sizeof targets / sizeof targets[0]); }

const char* xm_lapack_target(int i) { return targets[i].name; }

int xm_lapack_target_ready(int i) {
  pthread_mutex_lock(&lib.mu);
  int ok = targets[i].routine == 0 ? lib.potrf[targets[i].type] != NULL : lib.trsm[targets[i].type] != NULL;
  pthread_mutex_unlock(&lib.mu);
  return ok;
}

// ffi_extension returns the plugin's FFI extension when it has register_handler, else NULL.
static const xm_ffi_extension* ffi_extension(const PJRT_Api* api) {
  if (api == NULL || api->struct_size < offsetof(PJRT_Api, extension_start) + sizeof(api->extension_start)) {
    return NULL;
  }
  for (const PJRT_Extension_Base* e = api->extension_start; e != NULL; e = e->next) {
    if (e->type != PJRT_Extension_Type_FFI) continue;
    if (e->struct_size < XM_FFI_EXTENSION_SIZE) return NULL;
    const xm_ffi_extension* x = (const xm_ffi_extension*)e;
    return x->register_handler != NULL ? x : NULL;
  }
  return NULL;
}

int xm_ffi_can_register(const PJRT_Api* api) { return ffi_extension(api) != NULL; }

char* xm_lapack_register(const PJRT_Api* api, int i) {
  const xm_ffi_extension* x = ffi_extension(api);
  if (x == NULL) return lapack_errorf("the plugin has no PJRT FFI extension with register_handler");
  xm_ffi_register_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XM_FFI_REGISTER_ARGS_SIZE;
  a.target_name = targets[i].name;
  a.target_name_size = strlen(targets[i].name);
  a.handler = (void*)targets[i].handler;
  a.platform_name = "cpu";
  a.platform_name_size = 3;
  PJRT_Error* err = x->register_handler(&a);
  if (err == NULL) return NULL;
  int code = 0;
  char* msg = NULL;
  xm_error_take(api, err, &code, &msg);
  return msg != NULL ? msg : lapack_errorf("registering %s failed (code %d)", targets[i].name, code);
}
