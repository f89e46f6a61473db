// xlamesh_lapack.c: see xlamesh_lapack.h.
//
// Each handler decodes XLA's call frame as jaxlib's kernel of the same name declares it
// (jaxlib/cpu/lapack_kernels.cc): the operands and results, the attributes (single characters
// as u8 scalars), matrices in the last two dimensions stored column-major (the custom call's
// operand_layouts), the leading dimensions a batch. It checks what it decodes (a wrong frame
// is an error the call returns, never a bad read) and calls the routine once per matrix.
#include "xlamesh_lapack.h"

#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
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

// ---- The library ----

// The routines' Fortran ABI, 32-bit integers. Character arguments are followed, after all the
// others, by their lengths, which gfortran-compiled routines read and C ones (OpenBLAS's) ignore.
typedef void potrf_fn(const char* uplo, const int* n, void* a, const int* lda, int* info, size_t);
typedef void trsm_fn(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
                     const int* n, const void* alpha, const void* a, const int* lda, void* b, const int* ldb,
                     size_t, size_t, size_t, size_t);
typedef void getrf_fn(const int* m, const int* n, void* a, const int* lda, int* ipiv, int* info);
typedef void geqrf_fn(const int* m, const int* n, void* a, const int* lda, void* tau, void* work, const int* lwork,
                      int* info);
typedef void orgqr_fn(const int* m, const int* n, const int* k, void* a, const int* lda, const void* tau, void* work,
                      const int* lwork, int* info);
typedef void syevd_fn(const char* jobz, const char* uplo, const int* n, void* a, const int* lda, void* w, void* work,
                      const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
typedef void heevd_fn(const char* jobz, const char* uplo, const int* n, void* a, const int* lda, void* w, void* work,
                      const int* lwork, void* rwork, const int* lrwork, int* iwork, const int* liwork, int* info,
                      size_t, size_t);
typedef void gesdd_fn(const char* jobz, const int* m, const int* n, void* a, const int* lda, void* s, void* u,
                      const int* ldu, void* vt, const int* ldvt, void* work, const int* lwork, int* iwork, int* info,
                      size_t);
typedef void cgesdd_fn(const char* jobz, const int* m, const int* n, void* a, const int* lda, void* s, void* u,
                       const int* ldu, void* vt, const int* ldvt, void* work, const int* lwork, void* rwork, int* iwork,
                       int* info, size_t);
typedef void gesvd_fn(const char* jobu, const char* jobvt, const int* m, const int* n, void* a, const int* lda,
                      void* s, void* u, const int* ldu, void* vt, const int* ldvt, void* work, const int* lwork,
                      int* info, size_t, size_t);
typedef void cgesvd_fn(const char* jobu, const char* jobvt, const int* m, const int* n, void* a, const int* lda,
                       void* s, void* u, const int* ldu, void* vt, const int* ldvt, void* work, const int* lwork,
                       void* rwork, int* info, size_t, size_t);
typedef void geqp3_fn(const int* m, const int* n, void* a, const int* lda, int* jpvt, void* tau, void* work,
                      const int* lwork, int* info);
typedef void cgeqp3_fn(const int* m, const int* n, void* a, const int* lda, int* jpvt, void* tau, void* work,
                       const int* lwork, void* rwork, int* info);
typedef void ormqr_fn(const char* side, const char* trans, const int* m, const int* n, const int* k, const void* a,
                      const int* lda, const void* tau, void* c, const int* ldc, void* work, const int* lwork, int* info,
                      size_t, size_t);
typedef void gtsv_fn(const int* n, const int* nrhs, void* dl, void* d, void* du, void* b, const int* ldb, int* info);
typedef void gehrd_fn(const int* n, const int* ilo, const int* ihi, void* a, const int* lda, void* tau, void* work,
                      const int* lwork, int* info);
typedef void sytrd_fn(const char* uplo, const int* n, void* a, const int* lda, void* d, void* e, void* tau, void* work,
                      const int* lwork, int* info, size_t);
typedef void geev_fn(const char* jobvl, const char* jobvr, const int* n, void* a, const int* lda, void* wr, void* wi,
                     void* vl, const int* ldvl, void* vr, const int* ldvr, void* work, const int* lwork, int* info,
                     size_t, size_t);
typedef void cgeev_fn(const char* jobvl, const char* jobvr, const int* n, void* a, const int* lda, void* w, void* vl,
                      const int* ldvl, void* vr, const int* ldvr, void* work, const int* lwork, void* rwork, int* info,
                      size_t, size_t);
typedef void gees_fn(const char* jobvs, const char* sort, void* select, const int* n, void* a, const int* lda,
                     int* sdim, void* wr, void* wi, void* vs, const int* ldvs, void* work, const int* lwork,
                     void* bwork, int* info, size_t, size_t);
typedef void cgees_fn(const char* jobvs, const char* sort, void* select, const int* n, void* a, const int* lda,
                      int* sdim, void* w, void* vs, const int* ldvs, void* work, const int* lwork, void* rwork,
                      void* bwork, int* info, size_t, size_t);

// The element types, in the order of the routines' s, d, c, z prefixes.
enum { XM_S, XM_D, XM_C, XM_Z, XM_NTYPES };
static const char xm_prefix[XM_NTYPES] = {'s', 'd', 'c', 'z'};
static const XLA_FFI_DataType xm_dtype[XM_NTYPES] = {XLA_FFI_DataType_F32, XLA_FFI_DataType_F64,
                                                     XLA_FFI_DataType_C64, XLA_FFI_DataType_C128};
// xm_real is the type of a real result (eigenvalues, singular values) of each element type.
static const XLA_FFI_DataType xm_real[XM_NTYPES] = {XLA_FFI_DataType_F32, XLA_FFI_DataType_F64,
                                                    XLA_FFI_DataType_F32, XLA_FFI_DataType_F64};
static const size_t xm_size[XM_NTYPES] = {4, 8, 8, 16};
#define XM_COMPLEX(t) ((t) == XM_C || (t) == XM_Z)

// The routines, each named without its type prefix for real and for complex types.
enum {
  XM_POTRF,
  XM_TRSM,
  XM_GETRF,
  XM_GEQRF,
  XM_ORGQR,
  XM_SYEVD,
  XM_GESDD,
  XM_GTSV,
  XM_GEHRD,
  XM_SYTRD,
  XM_GEEV,
  XM_GEES,
  XM_GESVD,
  XM_GEQP3,
  XM_ORMQR,
  XM_NROUTINES
};
static const char* const xm_routine[XM_NROUTINES][2] = {
    {"potrf", "potrf"}, {"trsm", "trsm"},   {"getrf", "getrf"}, {"geqrf", "geqrf"},
    {"orgqr", "ungqr"}, {"syevd", "heevd"}, {"gesdd", "gesdd"}, {"gtsv", "gtsv"},
    {"gehrd", "gehrd"}, {"sytrd", "hetrd"}, {"geev", "geev"},   {"gees", "gees"},
    {"gesvd", "gesvd"}, {"geqp3", "geqp3"}, {"ormqr", "unmqr"},
};

static struct {
  pthread_mutex_t mu;
  void* handle;
  char* path;
  void* fn[XM_NROUTINES][XM_NTYPES];
} lib = {.mu = PTHREAD_MUTEX_INITIALIZER};

// routine_name writes the LAPACK name of routine r for type t, e.g. "cungqr".
static void routine_name(char* buf, size_t n, int r, int t) {
  snprintf(buf, n, "%c%s", xm_prefix[t], xm_routine[r][XM_COMPLEX(t)]);
}

// lookup finds routine (e.g. "spotrf") in h: scipy-openblas's scipy_spotrf_, else spotrf_.
static void* lookup(void* h, const char* routine) {
  char name[64];
  snprintf(name, sizeof name, "scipy_%s_", routine);
  void* f = dlsym(h, name);
  if (f != NULL) return f;
  snprintf(name, sizeof name, "%s_", routine);
  return dlsym(h, name);
}

// check_integers refuses a library whose integers are 64-bit (an ILP64 build, such as Debian's
// libopenblas64, under the usual names): the kernels pass 32-bit ones, as jaxlib does, and such
// a library would read every size and leading dimension wrong (wrong results, or a crash). The
// probe asks BLAS's idamax for the largest of 3 values with n stored as the 32-bit 3 followed by
// -1: a 32-bit library reads 3 and answers 2; a 64-bit one reads a negative n and answers 0,
// touching nothing. A library without idamax is not probed.
static char* check_integers(void* h, const char* path) {
  typedef int idamax_fn(const int* n, const double* x, const int* incx);
  idamax_fn* idamax = (idamax_fn*)lookup(h, "idamax");
  if (idamax == NULL) return NULL;
  const int n[2] = {3, -1}, inc[2] = {1, -1};
  const double x[3] = {1, -5, 2};
  int got = idamax(n, x, inc);
  if (got == 2) return NULL;
  return xm_errorf("%s takes 64-bit integers (an ILP64 build: its idamax_ did not read a 32-bit n = 3, it "
                   "answered %d); xlamesh's kernels call LAPACK with 32-bit integers, as jaxlib does: use an LP64 "
                   "one, such as the scipy-openblas32 wheel `xlamesh install-plugin -plugin lapack` installs or a "
                   "system liblapack.so.3",
                   path, got);
}

char* xm_lapack_load(const char* path) {
  pthread_mutex_lock(&lib.mu);
  char* err = NULL;
  if (lib.handle != NULL) {
    if (strcmp(lib.path, path) != 0) {
      err = xm_errorf("LAPACK %s is loaded in this process; cannot load %s too", lib.path, path);
    }
    pthread_mutex_unlock(&lib.mu);
    return err;
  }
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char* e = dlerror();
    err = xm_errorf("%s", e != NULL ? e : path);
    pthread_mutex_unlock(&lib.mu);
    return err;
  }
  int found = 0;
  for (int r = 0; r < XM_NROUTINES; r++) {
    for (int t = 0; t < XM_NTYPES; t++) {
      char routine[16];
      routine_name(routine, sizeof routine, r, t);
      lib.fn[r][t] = lookup(h, routine);
      found += lib.fn[r][t] != NULL;
    }
  }
  if (found == 0) {
    dlclose(h);
    err = xm_errorf("%s has none of the LAPACK routines xlamesh calls (spotrf_ or scipy_spotrf_, ...)", path);
    pthread_mutex_unlock(&lib.mu);
    return err;
  }
  if ((err = check_integers(h, path)) != NULL) {
    // Not closed: an OpenBLAS has started its threads, which dlclose may not stop cleanly.
    memset(lib.fn, 0, sizeof lib.fn);
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

// A call being decoded: its frame, its target's name, and the routine and element type.
typedef struct {
  XLA_FFI_CallFrame* f;
  char target[32];
  int r, t;
} call;

// fail returns an INVALID_ARGUMENT error that begins with the call's target.
static XLA_FFI_Error* fail(const call* c, const char* format, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, format);
  vsnprintf(msg, sizeof msg, format, ap);
  va_end(ap);
  return ffi_error(c->f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: %s", c->target, msg);
}

// begin starts decoding a call of routine r on type t. *done is set when there is nothing to
// run (a metadata question, or a stage other than execution); the error is that of a routine
// the library lacks.
static XLA_FFI_Error* begin(XLA_FFI_CallFrame* f, int r, int t, call* c, int* done) {
  *done = answer_metadata(f) || f->stage != XLA_FFI_ExecutionStage_EXECUTE;
  if (*done) return NULL;
  c->f = f;
  c->r = r;
  c->t = t;
  char routine[16];
  routine_name(routine, sizeof routine, r, t);
  snprintf(c->target, sizeof c->target, "lapack_%s_ffi", routine);
  if (lib.fn[r][t] == NULL) {
    return ffi_error(f->api, XLA_FFI_Error_Code_UNIMPLEMENTED, "%s: LAPACK %s has no %s", c->target,
                     lib.path != NULL ? lib.path : "(none loaded)", routine);
  }
  return NULL;
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

// as_matrix reads operand (ret = 0) or result (ret = 1) i, named what, as a batch of matrices
// of type dt.
static XLA_FFI_Error* as_matrix(const call* c, int ret, int64_t i, const char* what, XLA_FFI_DataType dt, matrix* m) {
  XLA_FFI_Buffer* b = buffer(c->f, ret, i);
  if (b == NULL) return fail(c, "%s is missing or not a buffer", what);
  if (b->dtype != dt) return fail(c, "%s has element type %d, want %d", what, (int)b->dtype, (int)dt);
  if (b->rank < 2) return fail(c, "%s has rank %lld, want a matrix or a batch of them", what, (long long)b->rank);
  m->buf = b;
  m->batch = 1;
  for (int64_t k = 0; k < b->rank - 2; k++) m->batch *= b->dims[k];
  m->rows = b->dims[b->rank - 2];
  m->cols = b->dims[b->rank - 1];
  if (m->rows > INT32_MAX / 8 || m->cols > INT32_MAX / 8) {
    return fail(c, "%s is %lldx%lld; LAPACK with 32-bit integers (and its workspaces) takes at most %d", what,
                (long long)m->rows, (long long)m->cols, INT32_MAX / 8);
  }
  return NULL;
}

// as_batch reads operand or result i, named what, as count elements of type dt in any shape
// (a batch of vectors, of pivots, of info values), and returns its data in *data.
static XLA_FFI_Error* as_batch(const call* c, int ret, int64_t i, const char* what, XLA_FFI_DataType dt,
                               int64_t count, void** data) {
  XLA_FFI_Buffer* b = buffer(c->f, ret, i);
  if (b == NULL) return fail(c, "%s is missing or not a buffer", what);
  if (b->dtype != dt) return fail(c, "%s has element type %d, want %d", what, (int)b->dtype, (int)dt);
  int64_t n = 1;
  for (int64_t k = 0; k < b->rank; k++) n *= b->dims[k];
  if (n != count) return fail(c, "%s has %lld elements, want %lld", what, (long long)n, (long long)count);
  *data = b->data;
  return NULL;
}

// scalar_attr returns the scalar attribute name if it has element type dt (or dt2), else NULL.
static const XLA_FFI_Scalar* scalar_attr(const call* c, const char* name, XLA_FFI_DataType dt,
                                         XLA_FFI_DataType dt2) {
  XLA_FFI_CallFrame* f = c->f;
  for (int64_t i = 0; i < f->attrs.size; i++) {
    XLA_FFI_ByteSpan* n = f->attrs.names[i];
    if (n->len != strlen(name) || memcmp(n->ptr, name, n->len) != 0) continue;
    if (f->attrs.types[i] != XLA_FFI_AttrType_SCALAR) return NULL;
    const XLA_FFI_Scalar* s = (const XLA_FFI_Scalar*)f->attrs.attrs[i];
    return s->dtype == dt || s->dtype == dt2 ? s : NULL;
  }
  return NULL;
}

// char_attr reads the u8 attribute name (a LAPACK character flag) into *v, checking it is one
// of allowed.
static XLA_FFI_Error* char_attr(const call* c, const char* name, const char* allowed, char* v) {
  const XLA_FFI_Scalar* s = scalar_attr(c, name, XLA_FFI_DataType_U8, XLA_FFI_DataType_S8);
  if (s == NULL) return fail(c, "no u8 attribute %s", name);
  *v = *(const char*)s->value;
  if (*v == 0 || strchr(allowed, *v) == NULL) {
    return fail(c, "attribute %s is %d, want one of %s", name, (int)(unsigned char)*v, allowed);
  }
  return NULL;
}

// int_attr reads the s32 attribute name into *v.
static XLA_FFI_Error* int_attr(const call* c, const char* name, int* v) {
  const XLA_FFI_Scalar* s = scalar_attr(c, name, XLA_FFI_DataType_S32, XLA_FFI_DataType_S32);
  if (s == NULL) return fail(c, "no s32 attribute %s", name);
  *v = *(const int32_t*)s->value;
  return NULL;
}

// bool_attr reads the pred attribute name into *v.
static XLA_FFI_Error* bool_attr(const call* c, const char* name, int* v) {
  const XLA_FFI_Scalar* s = scalar_attr(c, name, XLA_FFI_DataType_PRED, XLA_FFI_DataType_PRED);
  if (s == NULL) return fail(c, "no bool attribute %s", name);
  *v = *(const uint8_t*)s->value != 0;
  return NULL;
}

// copy_in copies the operand into the result when XLA did not alias them.
static void copy_in(const matrix* in, matrix* out, size_t elem) {
  if (in->buf->data == out->buf->data) return;
  memcpy(out->buf->data, in->buf->data, (size_t)(in->batch * in->rows * in->cols) * elem);
}

// same_shape reports whether out has in's batch and matrix dimensions.
static int same_shape(const matrix* in, const matrix* out) {
  return in->batch == out->batch && in->rows == out->rows && in->cols == out->cols;
}

// workspace allocates n elements of size elem (at least one), or returns NULL.
static void* workspace(int64_t n, size_t elem) { return calloc(n > 0 ? (size_t)n : 1, elem); }

static XLA_FFI_Error* out_of_memory(const call* c, int64_t n) {
  return ffi_error(c->f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                   "%s: no host memory for a workspace of %lld elements", c->target, (long long)n);
}

// query_size is a LAPACK workspace query's answer, the real part of its first element (at
// least 1).
static int64_t query_size(const void* w, int t) {
  double v = t == XM_S || t == XM_C ? (double)*(const float*)w : *(const double*)w;
  return v >= 1 && v < 9e18 ? (int64_t)v : 1;
}

// too_big is the error for a workspace whose size LAPACK's 32-bit integers cannot give, or NULL.
static XLA_FFI_Error* too_big(const call* c, const char* what, int64_t n) {
  if (n <= INT32_MAX) return NULL;
  return ffi_error(c->f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                   "%s: LAPACK's %s would need %lld elements, more than its 32-bit sizes can say", c->target, what,
                   (long long)n);
}

// query_work turns the answer q of a workspace query into *lwork and a workspace *work of that
// many elements, which the caller frees.
static XLA_FFI_Error* query_work(const call* c, const void* q, int* lwork, void** work) {
  int64_t want = query_size(q, c->t);
  XLA_FFI_Error* err = too_big(c, "work", want);
  if (err != NULL) return err;
  *lwork = (int)want;
  *work = workspace(want, xm_size[c->t]);
  return *work == NULL ? out_of_memory(c, want) : NULL;
}

// in_out decodes operand x and result x_out as batches of matrices of the call's type of the
// same shape, square ones if square is set.
static XLA_FFI_Error* in_out(const call* c, matrix* x, matrix* out, int square) {
  XLA_FFI_Error* err;
  if ((err = as_matrix(c, 0, 0, "operand x", xm_dtype[c->t], x)) != NULL) return err;
  if ((err = as_matrix(c, 1, 0, "result x_out", xm_dtype[c->t], out)) != NULL) return err;
  if (square && x->rows != x->cols) return fail(c, "want square matrices x and x_out of the same shape");
  if (!same_shape(x, out)) return fail(c, "want x_out shaped as x");
  return NULL;
}

#define MAXI(a, b) ((a) > (b) ? (a) : (b))
#define MINI(a, b) ((a) < (b) ? (a) : (b))

// ---- The kernels, each as jaxlib's kernel of the same target ----

// potrf(x) -> (x_out, info), attribute uplo: x_out's uplo triangle holds each matrix's Cholesky
// factor, info its LAPACK info (0, or the order of the first minor that is not positive
// definite); the other triangle keeps x's values.
static XLA_FFI_Error* potrf(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_POTRF, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void* info;
  char uplo;
  if ((err = in_out(&c, &x, &out, 1)) != NULL) return err;
  if ((err = as_batch(&c, 1, 1, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  if ((err = char_attr(&c, "uplo", "LU", &uplo)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int n = (int)x.rows, lda = MAXI(n, 1);
  size_t step = (size_t)n * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    *inf = 0;
    if (n > 0) ((potrf_fn*)lib.fn[XM_POTRF][t])(&uplo, &n, (char*)out.buf->data + (size_t)b * step, &lda, inf, 1);
  }
  return NULL;
}

// trsm(x, y[, alpha]) -> y_out, attributes side, uplo, trans_x, diag: y_out solves
// op(x) a = alpha y (side L) or a op(x) = alpha y (side R), matrix by matrix, x triangular.
// alpha is 1 unless the call passes it as a third, scalar operand (jaxlib's 2024 form).
static XLA_FFI_Error* trsm(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_TRSM, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, y, out;
  char side, uplo, trans, diag;
  if ((err = as_matrix(&c, 0, 0, "operand x", xm_dtype[t], &x)) != NULL) return err;
  if ((err = as_matrix(&c, 0, 1, "operand y", xm_dtype[t], &y)) != NULL) return err;
  if ((err = as_matrix(&c, 1, 0, "result y_out", xm_dtype[t], &out)) != NULL) return err;
  if ((err = char_attr(&c, "side", "LR", &side)) != NULL) return err;
  if ((err = char_attr(&c, "uplo", "LU", &uplo)) != NULL) return err;
  if ((err = char_attr(&c, "trans_x", "NTC", &trans)) != NULL) return err;
  if ((err = char_attr(&c, "diag", "NU", &diag)) != NULL) return err;
  int64_t k = side == 'L' ? y.rows : y.cols;
  if (x.rows != k || x.cols != k || x.batch != y.batch || !same_shape(&y, &out)) {
    return fail(&c, "want x of %lldx%lld matrices for y's, as many of each, and y_out shaped as y", (long long)k,
                (long long)k);
  }
  static const double one[2] = {1, 0};
  static const float onef[2] = {1, 0};
  const void* alpha = (t == XM_S || t == XM_C) ? (const void*)onef : (const void*)one;
  if (f->args.size > 2) {
    void* a;
    if ((err = as_batch(&c, 0, 2, "operand alpha", xm_dtype[t], 1, &a)) != NULL) return err;
    alpha = a;
  }
  copy_in(&y, &out, xm_size[t]);
  int m = (int)y.rows, n = (int)y.cols;
  if (m == 0 || n == 0) return NULL;
  int lda = MAXI((int)k, 1), ldb = m;
  size_t xs = (size_t)k * (size_t)k * xm_size[t], ys = (size_t)m * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < y.batch; b++) {
    ((trsm_fn*)lib.fn[XM_TRSM][t])(&side, &uplo, &trans, &diag, &m, &n, alpha,
                                    (const char*)x.buf->data + (size_t)b * xs, &lda,
                                    (char*)out.buf->data + (size_t)b * ys, &ldb, 1, 1, 1, 1);
  }
  return NULL;
}

// getrf(x) -> (x_out, ipiv, info): LU factorization with partial pivoting of each m x n matrix;
// ipiv holds min(m, n) 1-based pivot rows per matrix.
static XLA_FFI_Error* getrf(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_GETRF, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void *ipiv, *info;
  if ((err = in_out(&c, &x, &out, 0)) != NULL) return err;
  int64_t k = MINI(x.rows, x.cols);
  if ((err = as_batch(&c, 1, 1, "result ipiv", XLA_FFI_DataType_S32, x.batch * k, &ipiv)) != NULL) return err;
  if ((err = as_batch(&c, 1, 2, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int m = (int)x.rows, n = (int)x.cols, lda = MAXI(m, 1);
  size_t step = (size_t)m * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    *inf = 0;
    if (m > 0 && n > 0) {
      ((getrf_fn*)lib.fn[XM_GETRF][t])(&m, &n, (char*)out.buf->data + (size_t)b * step, &lda, (int*)ipiv + b * k, inf);
    }
  }
  return NULL;
}

// geqrf(x) -> (x_out, tau): QR factorization of each m x n matrix, R above the diagonal and
// the Householder reflectors below it, their min(m, n) scalars in tau.
static XLA_FFI_Error* geqrf(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_GEQRF, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void* tau;
  if ((err = in_out(&c, &x, &out, 0)) != NULL) return err;
  int64_t k = MINI(x.rows, x.cols);
  if ((err = as_batch(&c, 1, 1, "result tau", xm_dtype[t], x.batch * k, &tau)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int m = (int)x.rows, n = (int)x.cols, lda = MAXI(m, 1), info = 0;
  if (m == 0 || n == 0) return NULL;
  geqrf_fn* fn = (geqrf_fn*)lib.fn[XM_GEQRF][t];
  double q[2] = {0, 0};
  int lwork = -1;
  fn(&m, &n, NULL, &lda, NULL, q, &lwork, &info);
  void* work;
  if ((err = query_work(&c, q, &lwork, &work)) != NULL) return err;
  size_t step = (size_t)m * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    fn(&m, &n, (char*)out.buf->data + (size_t)b * step, &lda, (char*)tau + (size_t)(b * k) * xm_size[t], work, &lwork,
       &info);
  }
  free(work);
  return NULL;
}

// orgqr / ungqr(x, tau) -> x_out: the m x n matrix Q with orthonormal columns of the first
// k = tau's last dimension reflectors geqrf left in x.
static XLA_FFI_Error* orgqr(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_ORGQR, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  if ((err = in_out(&c, &x, &out, 0)) != NULL) return err;
  XLA_FFI_Buffer* tb = buffer(f, 0, 1);
  if (tb == NULL || tb->rank < 1) return fail(&c, "operand tau is missing or not a batch of vectors");
  int64_t k = tb->dims[tb->rank - 1];
  if (k > x.cols || x.cols > x.rows) {
    return fail(&c, "want m >= n >= k; x is %lldx%lld, tau has %lld", (long long)x.rows, (long long)x.cols,
                (long long)k);
  }
  void* tau;
  if ((err = as_batch(&c, 0, 1, "operand tau", xm_dtype[t], x.batch * k, &tau)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int m = (int)x.rows, n = (int)x.cols, kk = (int)k, lda = MAXI(m, 1), info = 0;
  if (m == 0 || n == 0) return NULL;
  orgqr_fn* fn = (orgqr_fn*)lib.fn[XM_ORGQR][t];
  double q[2] = {0, 0};
  int lwork = -1;
  fn(&m, &n, &kk, NULL, &lda, NULL, q, &lwork, &info);
  void* work;
  if ((err = query_work(&c, q, &lwork, &work)) != NULL) return err;
  size_t step = (size_t)m * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    fn(&m, &n, &kk, (char*)out.buf->data + (size_t)b * step, &lda, (const char*)tau + (size_t)(b * k) * xm_size[t],
       work, &lwork, &info);
  }
  free(work);
  return NULL;
}

// geqp3(x, jpvt) -> (x_out, jpvt_out, tau): QR factorization with column pivoting of each
// m x n matrix, laid out as geqrf's; jpvt holds n 1-based column indices per matrix, a nonzero
// one on entry fixing that column to the front, and on return the permutation.
static XLA_FFI_Error* geqp3(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_GEQP3, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void *jpvt, *jpvt_out, *tau;
  if ((err = as_matrix(&c, 0, 0, "operand x", xm_dtype[t], &x)) != NULL) return err;
  if ((err = as_matrix(&c, 1, 0, "result x_out", xm_dtype[t], &out)) != NULL) return err;
  if (!same_shape(&x, &out)) return fail(&c, "want x_out shaped as x");
  int64_t k = MINI(x.rows, x.cols);
  if ((err = as_batch(&c, 0, 1, "operand jpvt", XLA_FFI_DataType_S32, x.batch * x.cols, &jpvt)) != NULL) return err;
  if ((err = as_batch(&c, 1, 1, "result jpvt_out", XLA_FFI_DataType_S32, x.batch * x.cols, &jpvt_out)) != NULL) {
    return err;
  }
  if ((err = as_batch(&c, 1, 2, "result tau", xm_dtype[t], x.batch * k, &tau)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  if (jpvt != jpvt_out) memcpy(jpvt_out, jpvt, (size_t)(x.batch * x.cols) * sizeof(int32_t));
  int m = (int)x.rows, n = (int)x.cols, lda = MAXI(m, 1), info = 0;
  if (m == 0 || n == 0) return NULL;
  void* fn = lib.fn[XM_GEQP3][t];
  void* rwork = workspace(XM_COMPLEX(t) ? 2 * x.cols : 1, xm_size[t] / (XM_COMPLEX(t) ? 2 : 1));
  if (rwork == NULL) return out_of_memory(&c, 2 * x.cols);
  double q[2] = {0, 0};
  int lwork = -1;
  if (XM_COMPLEX(t)) {
    ((cgeqp3_fn*)fn)(&m, &n, NULL, &lda, NULL, NULL, q, &lwork, NULL, &info);
  } else {
    ((geqp3_fn*)fn)(&m, &n, NULL, &lda, NULL, NULL, q, &lwork, &info);
  }
  void* work;
  if ((err = query_work(&c, q, &lwork, &work)) != NULL) {
    free(rwork);
    return err;
  }
  size_t step = (size_t)m * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    char* a = (char*)out.buf->data + (size_t)b * step;
    int* p = (int*)jpvt_out + b * n;
    char* tb = (char*)tau + (size_t)(b * k) * xm_size[t];
    if (XM_COMPLEX(t)) {
      ((cgeqp3_fn*)fn)(&m, &n, a, &lda, p, tb, work, &lwork, rwork, &info);
    } else {
      ((geqp3_fn*)fn)(&m, &n, a, &lda, p, tb, work, &lwork, &info);
    }
  }
  free(work);
  free(rwork);
  return NULL;
}

// ormqr / unmqr(a, tau, c) -> c_out, attributes left and transpose: c_out is Q c, Q^H c
// (left), c Q or c Q^H, matrix by matrix, where Q is the product of the k = tau's last
// dimension reflectors geqrf left in a (its rows those of c if left, c's columns if not).
static XLA_FFI_Error* ormqr(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_ORMQR, t, &c, &done);
  if (err != NULL || done) return err;
  matrix a, cm, out;
  int left, transpose;
  if ((err = as_matrix(&c, 0, 0, "operand a", xm_dtype[t], &a)) != NULL) return err;
  if ((err = as_matrix(&c, 0, 2, "operand c", xm_dtype[t], &cm)) != NULL) return err;
  if ((err = as_matrix(&c, 1, 0, "result c_out", xm_dtype[t], &out)) != NULL) return err;
  if ((err = bool_attr(&c, "left", &left)) != NULL) return err;
  if ((err = bool_attr(&c, "transpose", &transpose)) != NULL) return err;
  XLA_FFI_Buffer* tb = buffer(f, 0, 1);
  if (tb == NULL || tb->rank < 1) return fail(&c, "operand tau is missing or not a batch of vectors");
  int64_t k = tb->dims[tb->rank - 1], order = left ? cm.rows : cm.cols;
  if (!same_shape(&cm, &out) || a.batch != cm.batch || a.rows != order || k > a.cols || k > order) {
    return fail(&c, "want c_out shaped as c and, as many of each, a of %lld rows with k <= its columns and rows, "
                "k = %lld", (long long)order, (long long)k);
  }
  void* tau;
  if ((err = as_batch(&c, 0, 1, "operand tau", xm_dtype[t], a.batch * k, &tau)) != NULL) return err;
  copy_in(&cm, &out, xm_size[t]);
  char side = left ? 'L' : 'R', trans = !transpose ? 'N' : XM_COMPLEX(t) ? 'C' : 'T';
  int m = (int)cm.rows, n = (int)cm.cols, kk = (int)k, lda = MAXI((int)order, 1), ldc = MAXI(m, 1), info = 0;
  if (m == 0 || n == 0) return NULL;
  ormqr_fn* fn = (ormqr_fn*)lib.fn[XM_ORMQR][t];
  double q[2] = {0, 0};
  int lwork = -1;
  fn(&side, &trans, &m, &n, &kk, NULL, &lda, NULL, NULL, &ldc, q, &lwork, &info, 1, 1);
  void* work;
  if ((err = query_work(&c, q, &lwork, &work)) != NULL) return err;
  size_t astep = (size_t)(a.rows * a.cols) * xm_size[t], cstep = (size_t)m * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < cm.batch; b++) {
    fn(&side, &trans, &m, &n, &kk, (const char*)a.buf->data + (size_t)b * astep, &lda,
       (const char*)tau + (size_t)(b * k) * xm_size[t], (char*)out.buf->data + (size_t)b * cstep, &ldc, work, &lwork,
       &info, 1, 1);
  }
  free(work);
  return NULL;
}

// syevd / heevd(x) -> (x_out, w, info), attributes uplo and mode (V: eigenvectors too, N:
// eigenvalues only): the eigenvalues of each symmetric (Hermitian) matrix, read from its uplo
// triangle, ascending in w (real), the eigenvectors as x_out's columns.
static XLA_FFI_Error* syevd(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_SYEVD, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void *w, *info;
  char uplo, mode;
  if ((err = in_out(&c, &x, &out, 1)) != NULL) return err;
  if ((err = as_batch(&c, 1, 1, "result w", xm_real[t], x.batch * x.cols, &w)) != NULL) return err;
  if ((err = as_batch(&c, 1, 2, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  if ((err = char_attr(&c, "uplo", "LU", &uplo)) != NULL) return err;
  if ((err = char_attr(&c, "mode", "VN", &mode)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int64_t n64 = x.cols;
  int n = (int)n64, lda = MAXI(n, 1);
  // The workspace sizes LAPACK documents as enough, as jaxlib uses.
  int64_t lwork, lrwork = 0, liwork = mode == 'V' ? 3 + 5 * n64 : 1;
  if (XM_COMPLEX(t)) {
    lwork = mode == 'V' ? 2 * n64 + n64 * n64 : n64 + 1;
    lrwork = mode == 'V' ? 1 + 5 * n64 + 2 * n64 * n64 : MAXI(n64, 1);
  } else {
    lwork = mode == 'V' ? 1 + 6 * n64 + 2 * n64 * n64 : 2 * n64 + 1;
  }
  if ((err = too_big(&c, "work", lwork)) != NULL || (err = too_big(&c, "rwork", lrwork)) != NULL ||
      (err = too_big(&c, "iwork", liwork)) != NULL) {
    return err;
  }
  void* work = workspace(lwork, xm_size[t]);
  void* rwork = workspace(lrwork, xm_size[t] / (XM_COMPLEX(t) ? 2 : 1));
  int* iwork = workspace(liwork, sizeof(int));
  if (work == NULL || rwork == NULL || iwork == NULL) {
    free(work);
    free(rwork);
    free(iwork);
    return out_of_memory(&c, lwork + lrwork + liwork);
  }
  int lw = (int)lwork, lrw = (int)lrwork, liw = (int)liwork;
  size_t step = (size_t)n * (size_t)n * xm_size[t];
  size_t wstep = (size_t)n * (xm_size[t] / (XM_COMPLEX(t) ? 2 : 1));
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    *inf = 0;
    if (n == 0) continue;
    char* a = (char*)out.buf->data + (size_t)b * step;
    char* wb = (char*)w + (size_t)b * wstep;
    if (XM_COMPLEX(t)) {
      ((heevd_fn*)lib.fn[XM_SYEVD][t])(&mode, &uplo, &n, a, &lda, wb, work, &lw, rwork, &lrw, iwork, &liw, inf, 1, 1);
    } else {
      ((syevd_fn*)lib.fn[XM_SYEVD][t])(&mode, &uplo, &n, a, &lda, wb, work, &lw, iwork, &liw, inf, 1, 1);
    }
  }
  free(work);
  free(rwork);
  free(iwork);
  return NULL;
}

// lapack_svd calls routine r (XM_GESDD or XM_GESVD) on type t with LAPACK's arguments; a NULL a
// makes it a workspace query. gesvd is given mode as both its jobu and jobvt, as jaxlib does.
static void lapack_svd(int r, int t, char mode, int m, int n, void* a, int lda, void* s, void* u, int ldu, void* vt,
                       int ldvt, void* work, int lwork, void* rwork, int* iwork, int* info) {
  void* fn = lib.fn[r][t];
  if (r == XM_GESDD && XM_COMPLEX(t)) {
    ((cgesdd_fn*)fn)(&mode, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
  } else if (r == XM_GESDD) {
    ((gesdd_fn*)fn)(&mode, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
  } else if (XM_COMPLEX(t)) {
    ((cgesvd_fn*)fn)(&mode, &mode, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, info, 1, 1);
  } else {
    ((gesvd_fn*)fn)(&mode, &mode, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);
  }
}

// gesdd and gesvd(x) -> (x_out, s, u, vt, info), attribute mode (A: full u and vt, S: their
// first min(m, n) columns and rows, N: singular values only): the SVD of each m x n matrix, by
// divide and conquer (gesdd) or by QR iteration (gesvd), singular values descending in s (real).
// x_out is LAPACK's scratch.
static XLA_FFI_Error* svd(XLA_FFI_CallFrame* f, int r, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, r, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void *s, *info;
  char mode;
  if ((err = char_attr(&c, "mode", "ASNO", &mode)) != NULL) return err;
  if (mode == 'O') {
    return ffi_error(f->api, XLA_FFI_Error_Code_UNIMPLEMENTED, "%s: mode O is not implemented (nor is it in jaxlib)",
                     c.target);
  }
  if ((err = in_out(&c, &x, &out, 0)) != NULL) return err;
  int64_t m64 = x.rows, n64 = x.cols, k64 = MINI(m64, n64), mx64 = MAXI(m64, n64);
  if ((err = as_batch(&c, 1, 1, "result s", xm_real[t], x.batch * k64, &s)) != NULL) return err;
  XLA_FFI_Buffer* ub = buffer(f, 1, 2);
  XLA_FFI_Buffer* vb = buffer(f, 1, 3);
  if (ub == NULL || vb == NULL || ub->rank < 2 || vb->rank < 2) {
    return fail(&c, "results u and vt must be batches of matrices");
  }
  int64_t urows = ub->dims[ub->rank - 2], ucols = ub->dims[ub->rank - 1];
  int64_t vrows = vb->dims[vb->rank - 2], vcols = vb->dims[vb->rank - 1];
  if (mode != 'N' && (urows != m64 || ucols != (mode == 'A' ? m64 : k64) || vrows != (mode == 'A' ? n64 : k64) ||
                      vcols != n64)) {
    return fail(&c, "mode %c wants u of %lldx%lld and vt of %lldx%lld matrices", mode, (long long)m64,
                (long long)(mode == 'A' ? m64 : k64), (long long)(mode == 'A' ? n64 : k64), (long long)n64);
  }
  void *u, *vt;
  if ((err = as_batch(&c, 1, 2, "result u", xm_dtype[t], x.batch * urows * ucols, &u)) != NULL) return err;
  if ((err = as_batch(&c, 1, 3, "result vt", xm_dtype[t], x.batch * vrows * vcols, &vt)) != NULL) return err;
  if ((err = as_batch(&c, 1, 4, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int m = (int)m64, n = (int)n64, lda = MAXI(m, 1), ldu = MAXI(m, 1), ldvt = MAXI((int)vrows, 1), qinfo = 0;
  if (mode != 'N') ldvt = MAXI(mode == 'A' ? n : (int)k64, 1);
  // The workspaces jaxlib gives each routine: gesdd's integer one, and for complex types a real
  // one of the size LAPACK documents.
  int64_t liwork = r == XM_GESDD ? 8 * k64 : 0;
  int64_t lrwork = 0;
  if (XM_COMPLEX(t) && r == XM_GESVD) {
    lrwork = 5 * k64;
  } else if (XM_COMPLEX(t)) {
    lrwork = mode == 'N' ? 7 * k64 : MAXI(5 * k64 * k64 + 5 * k64, 2 * mx64 * k64 + 2 * k64 * k64 + k64);
  }
  if ((err = too_big(&c, "iwork", liwork)) != NULL || (err = too_big(&c, "rwork", lrwork)) != NULL) return err;
  double q[2] = {0, 0};
  int* iwork = workspace(liwork, sizeof(int));
  void* rwork = workspace(lrwork, xm_size[t] / (XM_COMPLEX(t) ? 2 : 1));
  if (iwork == NULL || rwork == NULL) {
    free(iwork);
    free(rwork);
    return out_of_memory(&c, liwork + lrwork);
  }
  if (m > 0 && n > 0) lapack_svd(r, t, mode, m, n, NULL, lda, NULL, NULL, ldu, NULL, ldvt, q, -1, rwork, iwork, &qinfo);
  int lwork;
  void* work;
  if ((err = query_work(&c, q, &lwork, &work)) != NULL) {
    free(iwork);
    free(rwork);
    return err;
  }
  size_t rsize = xm_size[t] / (XM_COMPLEX(t) ? 2 : 1);
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    *inf = 0;
    if (m == 0 || n == 0) continue;
    lapack_svd(r, t, mode, m, n, (char*)out.buf->data + (size_t)(b * m64 * n64) * xm_size[t], lda,
               (char*)s + (size_t)(b * k64) * rsize, (char*)u + (size_t)(b * urows * ucols) * xm_size[t], ldu,
               (char*)vt + (size_t)(b * vrows * vcols) * xm_size[t], ldvt, work, lwork, rwork, iwork, inf);
  }
  free(work);
  free(iwork);
  free(rwork);
  return NULL;
}

static XLA_FFI_Error* gesdd(XLA_FFI_CallFrame* f, int t) { return svd(f, XM_GESDD, t); }
static XLA_FFI_Error* gesvd(XLA_FFI_CallFrame* f, int t) { return svd(f, XM_GESVD, t); }

// gtsv(dl, d, du, b) -> (dl_out, d_out, du_out, b_out, info): solves each tridiagonal system
// with n x nrhs right-hand sides b; dl, d and du are the sub-, main and super-diagonals as n
// values each (dl's first and du's last unused), overwritten by LAPACK's factorization.
static XLA_FFI_Error* gtsv(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_GTSV, t, &c, &done);
  if (err != NULL || done) return err;
  matrix b, bout;
  if ((err = as_matrix(&c, 0, 3, "operand b", xm_dtype[t], &b)) != NULL) return err;
  if ((err = as_matrix(&c, 1, 3, "result b_out", xm_dtype[t], &bout)) != NULL) return err;
  if (!same_shape(&b, &bout)) return fail(&c, "want b_out shaped as b");
  static const char* const names[3][2] = {{"operand dl", "result dl_out"}, {"operand d", "result d_out"},
                                          {"operand du", "result du_out"}};
  void *in[3], *outd[3], *info;
  int64_t count = b.batch * b.rows;
  for (int i = 0; i < 3; i++) {
    if ((err = as_batch(&c, 0, i, names[i][0], xm_dtype[t], count, &in[i])) != NULL) return err;
    if ((err = as_batch(&c, 1, i, names[i][1], xm_dtype[t], count, &outd[i])) != NULL) return err;
    if (in[i] != outd[i]) memcpy(outd[i], in[i], (size_t)count * xm_size[t]);
  }
  if ((err = as_batch(&c, 1, 4, "result info", XLA_FFI_DataType_S32, b.batch, &info)) != NULL) return err;
  copy_in(&b, &bout, xm_size[t]);
  int n = (int)b.rows, nrhs = (int)b.cols, ldb = MAXI(n, 1);
  size_t dstep = (size_t)n * xm_size[t], bstep = (size_t)n * (size_t)nrhs * xm_size[t];
  for (int64_t k = 0; k < b.batch; k++) {
    int* inf = (int*)info + k;
    *inf = 0;
    if (n == 0) continue;
    char* dl = (char*)outd[0] + (size_t)k * dstep;
    ((gtsv_fn*)lib.fn[XM_GTSV][t])(&n, &nrhs, dl + xm_size[t], (char*)outd[1] + (size_t)k * dstep,
                                    (char*)outd[2] + (size_t)k * dstep, (char*)bout.buf->data + (size_t)k * bstep,
                                    &ldb, inf);
  }
  return NULL;
}

// ---- tridiagonal_solve_perturbed: jaxlib's own kernel, no LAPACK routine ----
//
// Solves T x = b for a tridiagonal T by Gaussian elimination with partial pivoting, as LAPACK's
// xLAGTF and xLAGTS do, perturbing a pivot that is too small to divide by (T numerically
// singular, as in inverse iteration) instead of failing. XM_PERTURBED(name, T, R, ABS, RE)
// defines name for element type T with real type R, ABS its magnitude and RE its real part.
#define XM_PERTURBED(name, T, R, ABS, RE, MIN, MAX, EPS)                                              \
  /* name_pivot perturbs *p (or scales it and row, k values) until neither row / p nor 1 / p      \
     overflows; perturb is the step, eps times the largest entry of U. */                          \
  static void name##_pivot(R perturb, T* p, T* row, int k) {                                      \
    const R one = 1, tiny = MIN, small = one / MAX;                                                \
    const R safemin = small < tiny ? tiny : small * (one + EPS), bignum = one / safemin;           \
    R mag = ABS(*p);                                                                               \
    if (mag >= one) return;                                                                        \
    perturb = copysign(fmax(fabs(perturb), safemin), RE(*p));                                      \
    R largest = 0;                                                                                 \
    for (int j = 0; j < k; j++) largest = fmax(largest, ABS(row[j]));                              \
    for (int stop = 0; mag < one && !stop; mag = ABS(*p)) {                                        \
      if (mag < safemin && mag != 0 && largest * safemin <= mag) {                                 \
        *p *= bignum;                                                                              \
        for (int j = 0; j < k; j++) row[j] *= bignum;                                              \
        stop = 1;                                                                                  \
      } else if (mag < safemin || largest > mag * bignum) {                                        \
        *p += perturb;                                                                             \
        perturb *= 2;                                                                              \
      } else {                                                                                     \
        stop = 1;                                                                                  \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  /* name solves one n x k system in place: x holds b on entry (column-major, n rows), the       \
     solution on return; u is 3n scratch (U's diagonal and two superdiagonals), row k. */         \
  static void name(int n, int k, const T* dl, const T* d, const T* du, T* x, T* u, T* row) {        \
    T *u0 = u, *u1 = u + n, *u2 = u + 2 * (size_t)n;                                               \
    if (n == 0) return;                                                                            \
    for (int i = 0; i < n; i++) u0[i] = u1[i] = u2[i] = 0;                                         \
    u0[0] = d[0];                                                                                  \
    u1[0] = n > 1 ? du[0] : 0;                                                                     \
    R umax = fmax(ABS(u0[0]), ABS(u1[0])), scale1 = ABS(u0[0]) + ABS(u1[0]);                       \
    for (int i = 0; i + 1 < n; i++) {                                                              \
      /* Eliminate dl[i+1] from row i+1, swapping rows i and i+1 when it is the larger pivot. */  \
      u0[i + 1] = d[i + 1];                                                                        \
      R scale2 = ABS(dl[i + 1]) + ABS(u0[i + 1]) + (i + 2 < n ? ABS(du[i + 1]) : 0);               \
      if (dl[i + 1] == 0) {                                                                        \
        scale1 = scale2;                                                                           \
        u1[i + 1] = du[i + 1];                                                                     \
      } else if (ABS(dl[i + 1]) / scale2 <= (u0[i] == 0 ? 0 : ABS(u0[i]) / scale1)) {              \
        T factor = dl[i + 1] / u0[i];                                                              \
        scale1 = scale2;                                                                           \
        u0[i + 1] -= factor * u1[i];                                                               \
        u1[i + 1] = du[i + 1];                                                                     \
        for (int j = 0; j < k; j++) x[i + 1 + (size_t)j * n] -= factor * x[i + (size_t)j * n];     \
      } else {                                                                                     \
        T factor = u0[i] / dl[i + 1], above = u1[i];                                               \
        u0[i] = dl[i + 1];                                                                         \
        u0[i + 1] = above - factor * d[i + 1];                                                     \
        u1[i] = d[i + 1];                                                                          \
        if (i + 2 < n) {                                                                           \
          u2[i] = du[i + 1];                                                                       \
          u1[i + 1] = -factor * du[i + 1];                                                         \
        }                                                                                          \
        for (int j = 0; j < k; j++) {                                                              \
          T* xi = x + i + (size_t)j * n;                                                           \
          T below = xi[1];                                                                         \
          xi[1] = xi[0] - factor * below;                                                          \
          xi[0] = below;                                                                           \
        }                                                                                          \
        scale1 = ABS(u0[i + 1]) + ABS(u1[i + 1]);                                                  \
      }                                                                                            \
      if (i + 2 < n) umax = fmax(umax, fmax(ABS(u0[i]), fmax(ABS(u1[i]), ABS(u2[i]))));            \
    }                                                                                              \
    umax = fmax(umax, ABS(u0[n - 1]));                                                             \
    const R perturb = EPS * umax;                                                                  \
    /* Back substitution through U, a pivot at a time. */                                          \
    for (int i = n - 1; i >= 0; i--) {                                                             \
      for (int j = 0; j < k; j++) {                                                                \
        T v = x[i + (size_t)j * n];                                                                \
        if (i + 1 < n) v -= u1[i] * x[i + 1 + (size_t)j * n];                                      \
        if (i + 2 < n) v -= u2[i] * x[i + 2 + (size_t)j * n];                                      \
        row[j] = v;                                                                                \
      }                                                                                            \
      T p = u0[i];                                                                                 \
      name##_pivot(n == 1 ? EPS * ABS(p) : perturb, &p, row, k);                                   \
      T inv = (T)1 / p;                                                                            \
      for (int j = 0; j < k; j++) x[i + (size_t)j * n] = row[j] * inv;                             \
    }                                                                                              \
  }

#define XM_ID(v) (v)
XM_PERTURBED(perturbed_s, float, float, fabsf, XM_ID, FLT_MIN, FLT_MAX, FLT_EPSILON)
XM_PERTURBED(perturbed_d, double, double, fabs, XM_ID, DBL_MIN, DBL_MAX, DBL_EPSILON)
XM_PERTURBED(perturbed_c, float complex, float, cabsf, crealf, FLT_MIN, FLT_MAX, FLT_EPSILON)
XM_PERTURBED(perturbed_z, double complex, double, cabs, creal, DBL_MIN, DBL_MAX, DBL_EPSILON)
#undef XM_ID
#undef XM_PERTURBED

// tridiagonal_solve_perturbed(dl, d, du, b) -> x: one target for every element type (the
// operands' own), b of n x nrhs matrices and dl, d, du of n values each per matrix.
static XLA_FFI_Error* perturbed(XLA_FFI_CallFrame* f) {
  if (answer_metadata(f) || f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  call c = {.f = f, .target = "tridiagonal_solve_perturbed_ffi"};
  XLA_FFI_Buffer* bb = buffer(f, 0, 3);
  if (bb == NULL) return fail(&c, "operand b is missing or not a buffer");
  c.t = -1;
  for (int t = 0; t < XM_NTYPES; t++) {
    if (bb->dtype == xm_dtype[t]) c.t = t;
  }
  if (c.t < 0) return fail(&c, "operand b has element type %d, want F32, F64, C64 or C128", (int)bb->dtype);
  int t = c.t;
  matrix b, x;
  XLA_FFI_Error* err;
  if ((err = as_matrix(&c, 0, 3, "operand b", xm_dtype[t], &b)) != NULL) return err;
  if ((err = as_matrix(&c, 1, 0, "result x", xm_dtype[t], &x)) != NULL) return err;
  if (!same_shape(&b, &x)) return fail(&c, "want x shaped as b");
  static const char* const names[3] = {"operand dl", "operand d", "operand du"};
  void* diag[3];
  for (int i = 0; i < 3; i++) {
    if ((err = as_batch(&c, 0, i, names[i], xm_dtype[t], b.batch * b.rows, &diag[i])) != NULL) return err;
  }
  copy_in(&b, &x, xm_size[t]);
  int n = (int)b.rows, k = (int)b.cols;
  void* u = workspace(3 * (int64_t)n, xm_size[t]);
  void* row = workspace(k, xm_size[t]);
  if (u == NULL || row == NULL) {
    free(u);
    free(row);
    return out_of_memory(&c, 3 * (int64_t)n + k);
  }
  size_t es = xm_size[t], dstep = (size_t)n * es, xstep = (size_t)n * (size_t)k * es;
  for (int64_t i = 0; i < b.batch; i++) {
    const char *dl = (const char*)diag[0] + (size_t)i * dstep, *d = (const char*)diag[1] + (size_t)i * dstep;
    const char* du = (const char*)diag[2] + (size_t)i * dstep;
    char* xb = (char*)x.buf->data + (size_t)i * xstep;
    switch (t) {
      case XM_S:
        perturbed_s(n, k, (const float*)dl, (const float*)d, (const float*)du, (float*)xb, u, row);
        break;
      case XM_D:
        perturbed_d(n, k, (const double*)dl, (const double*)d, (const double*)du, (double*)xb, u, row);
        break;
      case XM_C:
        perturbed_c(n, k, (const float complex*)dl, (const float complex*)d, (const float complex*)du,
                    (float complex*)xb, u, row);
        break;
      default:
        perturbed_z(n, k, (const double complex*)dl, (const double complex*)d, (const double complex*)du,
                    (double complex*)xb, u, row);
    }
  }
  free(u);
  free(row);
  return NULL;
}

// gehrd(x) -> (x_out, tau, info), attributes low and high (1-based, as LAPACK's ilo and ihi):
// reduces each n x n matrix to upper Hessenberg form, the reflectors below the subdiagonal, their
// n - 1 scalars in tau.
static XLA_FFI_Error* gehrd(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_GEHRD, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void *tau, *info;
  int low, high;
  if ((err = in_out(&c, &x, &out, 1)) != NULL) return err;
  int64_t k = MAXI(x.cols - 1, 0);
  if ((err = as_batch(&c, 1, 1, "result tau", xm_dtype[t], x.batch * k, &tau)) != NULL) return err;
  if ((err = as_batch(&c, 1, 2, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  if ((err = int_attr(&c, "low", &low)) != NULL) return err;
  if ((err = int_attr(&c, "high", &high)) != NULL) return err;
  int n = (int)x.cols, lda = MAXI(n, 1), qinfo = 0;
  if (low < 1 || high > n || (n > 0 && low > high + 1) || (n == 0 && (low != 1 || high != 0))) {
    return fail(&c, "low %d and high %d are not 1 <= low <= high <= n = %d", low, high, n);
  }
  copy_in(&x, &out, xm_size[t]);
  gehrd_fn* fn = (gehrd_fn*)lib.fn[XM_GEHRD][t];
  double q[2] = {0, 0};
  int lwork = -1;
  if (n > 0) fn(&n, &low, &high, NULL, &lda, NULL, q, &lwork, &qinfo);
  void* work;
  if ((err = query_work(&c, q, &lwork, &work)) != NULL) return err;
  size_t step = (size_t)n * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    *inf = 0;
    if (n > 0) {
      fn(&n, &low, &high, (char*)out.buf->data + (size_t)b * step, &lda, (char*)tau + (size_t)(b * k) * xm_size[t],
         work, &lwork, inf);
    }
  }
  free(work);
  return NULL;
}

// sytrd / hetrd(x) -> (x_out, d, e, tau, info), attribute uplo: reduces each symmetric
// (Hermitian) matrix, read from its uplo triangle, to tridiagonal form: its diagonal in d and
// off-diagonal in e (both real), the reflectors in x_out and their scalars in tau.
static XLA_FFI_Error* sytrd(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_SYTRD, t, &c, &done);
  if (err != NULL || done) return err;
  matrix x, out;
  void *d, *e, *tau, *info;
  char uplo;
  if ((err = in_out(&c, &x, &out, 1)) != NULL) return err;
  int64_t k = MAXI(x.cols - 1, 0);
  if ((err = as_batch(&c, 1, 1, "result d", xm_real[t], x.batch * x.cols, &d)) != NULL) return err;
  if ((err = as_batch(&c, 1, 2, "result e", xm_real[t], x.batch * k, &e)) != NULL) return err;
  if ((err = as_batch(&c, 1, 3, "result tau", xm_dtype[t], x.batch * k, &tau)) != NULL) return err;
  if ((err = as_batch(&c, 1, 4, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  if ((err = char_attr(&c, "uplo", "LU", &uplo)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int n = (int)x.cols, lda = MAXI(n, 1), qinfo = 0;
  sytrd_fn* fn = (sytrd_fn*)lib.fn[XM_SYTRD][t];
  double q[2] = {0, 0};
  int lwork = -1;
  if (n > 0) fn(&uplo, &n, NULL, &lda, NULL, NULL, NULL, q, &lwork, &qinfo, 1);
  void* work;
  if ((err = query_work(&c, q, &lwork, &work)) != NULL) return err;
  size_t rsize = xm_size[t] / (XM_COMPLEX(t) ? 2 : 1);
  size_t step = (size_t)n * (size_t)n * xm_size[t];
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    *inf = 0;
    if (n > 0) {
      fn(&uplo, &n, (char*)out.buf->data + (size_t)b * step, &lda, (char*)d + (size_t)(b * n) * rsize,
         (char*)e + (size_t)(b * k) * rsize, (char*)tau + (size_t)(b * k) * xm_size[t], work, &lwork, inf, 1);
    }
  }
  free(work);
  return NULL;
}

// all_finite reports whether the n values of type t at a (complex: both parts) are all finite.
static int all_finite(const void* a, int64_t n, int t) {
  int64_t parts = n * (XM_COMPLEX(t) ? 2 : 1);
  for (int64_t i = 0; i < parts; i++) {
    double v = (t == XM_S || t == XM_C) ? (double)((const float*)a)[i] : ((const double*)a)[i];
    if (v - v != 0) return 0;  // NaN or infinite
  }
  return 1;
}

// unpack_eigenvectors writes real geev's eigenvectors v (n x n, column-major) as complex ones:
// a column j with wi[j] = 0 is real; a pair j, j+1 with wi[j] > 0 stands for v_j ± i v_{j+1}.
static void unpack_eigenvectors(int t, int n, const void* wi, const void* v, void* out) {
  for (int j = 0; j < n; j++) {
    double im = t == XM_S ? ((const float*)wi)[j] : ((const double*)wi)[j];
    int pair = im != 0 && j + 1 < n;
    for (int i = 0; i < n; i++) {
      size_t a = (size_t)j * (size_t)n + (size_t)i, b = a + (size_t)n;
      if (t == XM_S) {
        const float* vf = v;
        float* o = out;
        o[2 * a] = vf[a];
        o[2 * a + 1] = pair ? vf[b] : 0;
        if (pair) {
          o[2 * b] = vf[a];
          o[2 * b + 1] = -vf[b];
        }
      } else {
        const double* vd = v;
        double* o = out;
        o[2 * a] = vd[a];
        o[2 * a + 1] = pair ? vd[b] : 0;
        if (pair) {
          o[2 * b] = vd[a];
          o[2 * b + 1] = -vd[b];
        }
      }
    }
    if (pair) j++;
  }
}

// geev(x) -> real: (wr, wi, vl, vr, info), complex: (w, vl, vr, info); attributes
// compute_left and compute_right (V or N): eigenvalues and left and right eigenvectors of each
// general matrix, the eigenvectors complex whatever x's type. A matrix that is not finite is
// not given to LAPACK: its info is -4, as jaxlib's.
static XLA_FFI_Error* geev(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_GEEV, t, &c, &done);
  if (err != NULL || done) return err;
  int cx = XM_COMPLEX(t);
  XLA_FFI_DataType ctype = t == XM_S ? XLA_FFI_DataType_C64 : t == XM_D ? XLA_FFI_DataType_C128 : xm_dtype[t];
  matrix x;
  void *wr = NULL, *wi = NULL, *vl, *vr, *info;
  char jobvl, jobvr;
  if ((err = as_matrix(&c, 0, 0, "operand x", xm_dtype[t], &x)) != NULL) return err;
  if (x.rows != x.cols) return fail(&c, "want square matrices x");
  int64_t n64 = x.cols, nn = n64 * n64;
  int r = 0;
  if ((err = as_batch(&c, 1, r++, cx ? "result w" : "result wr", xm_dtype[t], x.batch * n64, &wr)) != NULL) return err;
  if (!cx && (err = as_batch(&c, 1, r++, "result wi", xm_dtype[t], x.batch * n64, &wi)) != NULL) return err;
  if ((err = as_batch(&c, 1, r++, "result vl", ctype, x.batch * nn, &vl)) != NULL) return err;
  if ((err = as_batch(&c, 1, r++, "result vr", ctype, x.batch * nn, &vr)) != NULL) return err;
  if ((err = as_batch(&c, 1, r++, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  if ((err = char_attr(&c, "compute_left", "VN", &jobvl)) != NULL) return err;
  if ((err = char_attr(&c, "compute_right", "VN", &jobvr)) != NULL) return err;
  int n = (int)n64, ld = MAXI(n, 1), qinfo = 0;
  size_t es = xm_size[t], rsize = cx ? es / 2 : es;
  // Scratch: x's copy, LAPACK's real eigenvectors (real types), rwork (complex types).
  void* a = workspace(nn, es);
  void* lv = workspace(cx ? 1 : nn, es);
  void* rv = workspace(cx ? 1 : nn, es);
  void* rwork = workspace(cx ? 2 * n64 : 1, rsize);
  double q[2] = {0, 0};
  int lwork = -1;
  if (n > 0) {
    if (cx) {
      ((cgeev_fn*)lib.fn[XM_GEEV][t])(&jobvl, &jobvr, &n, NULL, &ld, NULL, NULL, &ld, NULL, &ld, q, &lwork, rwork,
                                       &qinfo, 1, 1);
    } else {
      ((geev_fn*)lib.fn[XM_GEEV][t])(&jobvl, &jobvr, &n, NULL, &ld, NULL, NULL, NULL, &ld, NULL, &ld, q, &lwork, &qinfo,
                                      1, 1);
    }
  }
  int64_t want = query_size(q, t);
  lwork = want > INT32_MAX ? 1 : (int)want;
  void* work = want > INT32_MAX ? NULL : workspace(lwork, es);
  if (a == NULL || lv == NULL || rv == NULL || rwork == NULL || work == NULL) {
    free(a);
    free(lv);
    free(rv);
    free(rwork);
    free(work);
    return want > INT32_MAX ? too_big(&c, "work", want) : out_of_memory(&c, nn + lwork);
  }
  size_t cs = cx ? es : 2 * es;  // the size of a complex eigenvector element
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    *inf = 0;
    if (n == 0) continue;
    memcpy(a, (const char*)x.buf->data + (size_t)(b * nn) * es, (size_t)nn * es);
    if (!all_finite(a, nn, t)) {
      *inf = -4;
      continue;
    }
    char* vlb = (char*)vl + (size_t)(b * nn) * cs;
    char* vrb = (char*)vr + (size_t)(b * nn) * cs;
    if (cx) {
      ((cgeev_fn*)lib.fn[XM_GEEV][t])(&jobvl, &jobvr, &n, a, &ld, (char*)wr + (size_t)(b * n64) * es, vlb, &ld, vrb,
                                       &ld, work, &lwork, rwork, inf, 1, 1);
    } else {
      char* wib = (char*)wi + (size_t)(b * n64) * es;
      ((geev_fn*)lib.fn[XM_GEEV][t])(&jobvl, &jobvr, &n, a, &ld, (char*)wr + (size_t)(b * n64) * es, wib, lv, &ld, rv,
                                      &ld, work, &lwork, inf, 1, 1);
      if (*inf == 0) {
        unpack_eigenvectors(t, n, wib, lv, vlb);
        unpack_eigenvectors(t, n, wib, rv, vrb);
      }
    }
  }
  free(a);
  free(lv);
  free(rv);
  free(rwork);
  free(work);
  return NULL;
}

// gees(x) -> real: (x_out, vs, wr, wi, sdim, info), complex: (x_out, vs, w, sdim, info);
// attributes mode (V: Schur vectors too, N: not) and sort (N only: jaxlib does not order the
// eigenvalues either): the Schur form of each matrix in x_out, its eigenvalues, sdim 0.
static XLA_FFI_Error* gees(XLA_FFI_CallFrame* f, int t) {
  call c;
  int done;
  XLA_FFI_Error* err = begin(f, XM_GEES, t, &c, &done);
  if (err != NULL || done) return err;
  int cx = XM_COMPLEX(t);
  matrix x, out;
  void *vs, *wr, *wi = NULL, *sdim, *info;
  char mode, sort;
  if ((err = char_attr(&c, "sort", "NS", &sort)) != NULL) return err;
  if (sort != 'N') {
    return ffi_error(f->api, XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "%s: ordering eigenvalues on the diagonal is not implemented (nor is it in jaxlib)", c.target);
  }
  if ((err = char_attr(&c, "mode", "VN", &mode)) != NULL) return err;
  if ((err = in_out(&c, &x, &out, 1)) != NULL) return err;
  int64_t n64 = x.cols, nn = n64 * n64;
  int r = 1;
  if ((err = as_batch(&c, 1, r++, "result vs", xm_dtype[t], x.batch * nn, &vs)) != NULL) return err;
  if ((err = as_batch(&c, 1, r++, cx ? "result w" : "result wr", xm_dtype[t], x.batch * n64, &wr)) != NULL) return err;
  if (!cx && (err = as_batch(&c, 1, r++, "result wi", xm_dtype[t], x.batch * n64, &wi)) != NULL) return err;
  if ((err = as_batch(&c, 1, r++, "result sdim", XLA_FFI_DataType_S32, x.batch, &sdim)) != NULL) return err;
  if ((err = as_batch(&c, 1, r++, "result info", XLA_FFI_DataType_S32, x.batch, &info)) != NULL) return err;
  copy_in(&x, &out, xm_size[t]);
  int n = (int)n64, ld = MAXI(n, 1), qinfo = 0, qsdim = 0;
  size_t es = xm_size[t], rsize = cx ? es / 2 : es;
  void* rwork = workspace(cx ? n64 : 1, rsize);
  double q[2] = {0, 0};
  int lwork = -1;
  if (n > 0) {
    if (cx) {
      ((cgees_fn*)lib.fn[XM_GEES][t])(&mode, &sort, NULL, &n, NULL, &ld, &qsdim, NULL, NULL, &ld, q, &lwork, rwork,
                                       NULL, &qinfo, 1, 1);
    } else {
      ((gees_fn*)lib.fn[XM_GEES][t])(&mode, &sort, NULL, &n, NULL, &ld, &qsdim, NULL, NULL, NULL, &ld, q, &lwork, NULL,
                                      &qinfo, 1, 1);
    }
  }
  int64_t want = query_size(q, t);
  lwork = want > INT32_MAX ? 1 : (int)want;
  void* work = want > INT32_MAX ? NULL : workspace(lwork, es);
  if (rwork == NULL || work == NULL) {
    free(rwork);
    free(work);
    return want > INT32_MAX ? too_big(&c, "work", want) : out_of_memory(&c, lwork + n64);
  }
  for (int64_t b = 0; b < x.batch; b++) {
    int* inf = (int*)info + b;
    int* sd = (int*)sdim + b;
    *inf = 0;
    *sd = 0;
    if (n == 0) continue;
    char* ab = (char*)out.buf->data + (size_t)(b * nn) * es;
    char* vsb = (char*)vs + (size_t)(b * nn) * es;
    char* wrb = (char*)wr + (size_t)(b * n64) * es;
    if (cx) {
      ((cgees_fn*)lib.fn[XM_GEES][t])(&mode, &sort, NULL, &n, ab, &ld, sd, wrb, vsb, &ld, work, &lwork, rwork, NULL,
                                       inf, 1, 1);
    } else {
      ((gees_fn*)lib.fn[XM_GEES][t])(&mode, &sort, NULL, &n, ab, &ld, sd, wrb, (char*)wi + (size_t)(b * n64) * es, vsb,
                                      &ld, work, &lwork, NULL, inf, 1, 1);
    }
  }
  free(rwork);
  free(work);
  return NULL;
}

// ---- The targets and their registration ----

typedef XLA_FFI_Error* kernel_fn(XLA_FFI_CallFrame* f, int t);
static kernel_fn* const kernels[XM_NROUTINES] = {potrf, trsm, getrf, geqrf, orgqr, syevd, gesdd, gtsv,
                                                  gehrd, sytrd, geev, gees,  gesvd, geqp3, ormqr};

// The handlers XLA calls: one per routine and type.
#define XM_HANDLERS(r)                                                                         \
  static XLA_FFI_Error* r##_s(XLA_FFI_CallFrame* f) { return kernels[XM_##r](f, XM_S); } \
  static XLA_FFI_Error* r##_d(XLA_FFI_CallFrame* f) { return kernels[XM_##r](f, XM_D); } \
  static XLA_FFI_Error* r##_c(XLA_FFI_CallFrame* f) { return kernels[XM_##r](f, XM_C); } \
  static XLA_FFI_Error* r##_z(XLA_FFI_CallFrame* f) { return kernels[XM_##r](f, XM_Z); }
XM_HANDLERS(POTRF)
XM_HANDLERS(TRSM)
XM_HANDLERS(GETRF)
XM_HANDLERS(GEQRF)
XM_HANDLERS(ORGQR)
XM_HANDLERS(SYEVD)
XM_HANDLERS(GESDD)
XM_HANDLERS(GTSV)
XM_HANDLERS(GEHRD)
XM_HANDLERS(SYTRD)
XM_HANDLERS(GEEV)
XM_HANDLERS(GEES)
XM_HANDLERS(GESVD)
XM_HANDLERS(GEQP3)
XM_HANDLERS(ORMQR)
#undef XM_HANDLERS

#define XM_ROW(r) {r##_s, r##_d, r##_c, r##_z}
static XLA_FFI_Handler* const handlers[XM_NROUTINES][XM_NTYPES] = {
    XM_ROW(POTRF), XM_ROW(TRSM),  XM_ROW(GETRF), XM_ROW(GEQRF), XM_ROW(ORGQR), XM_ROW(SYEVD),
    XM_ROW(GESDD), XM_ROW(GTSV),  XM_ROW(GEHRD), XM_ROW(SYTRD), XM_ROW(GEEV),  XM_ROW(GEES),
    XM_ROW(GESVD), XM_ROW(GEQP3), XM_ROW(ORMQR),
};
#undef XM_ROW

// Target i < XM_LAPACK_TARGETS is routine i / XM_NTYPES on type i % XM_NTYPES; the last,
// tridiagonal_solve_perturbed_ffi, calls no LAPACK routine.
#define XM_LAPACK_TARGETS (XM_NROUTINES * XM_NTYPES)

int xm_lapack_target_count(void) { return XM_LAPACK_TARGETS + 1; }

static char target_names[XM_LAPACK_TARGETS + 1][32];
static pthread_once_t target_names_once = PTHREAD_ONCE_INIT;

static void name_targets(void) {
  for (int i = 0; i < XM_LAPACK_TARGETS; i++) {
    char routine[16];
    routine_name(routine, sizeof routine, i / XM_NTYPES, i % XM_NTYPES);
    snprintf(target_names[i], sizeof target_names[i], "lapack_%s_ffi", routine);
  }
  snprintf(target_names[XM_LAPACK_TARGETS], sizeof target_names[0], "tridiagonal_solve_perturbed_ffi");
}

const char* xm_lapack_target(int i) {
  pthread_once(&target_names_once, name_targets);
  return target_names[i];
}

int xm_lapack_target_ready(int i) {
  if (i == XM_LAPACK_TARGETS) return 1;
  pthread_mutex_lock(&lib.mu);
  int ok = lib.fn[i / XM_NTYPES][i % XM_NTYPES] != NULL;
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
  if (x == NULL) return xm_errorf("the plugin has no PJRT FFI extension with register_handler");
  xm_ffi_register_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XM_FFI_REGISTER_ARGS_SIZE;
  const char* name = xm_lapack_target(i);
  a.target_name = name;
  a.target_name_size = strlen(name);
  a.handler = i == XM_LAPACK_TARGETS ? (void*)perturbed : (void*)handlers[i / XM_NTYPES][i % XM_NTYPES];
  a.platform_name = "cpu";
  a.platform_name_size = 3;
  PJRT_Error* err = x->register_handler(&a);
  if (err == NULL) return NULL;
  int code = 0;
  char* msg = NULL;
  xm_error_take(api, err, &code, &msg);
  return msg != NULL ? msg : xm_errorf("registering %s failed (code %d)", name, code);
}
