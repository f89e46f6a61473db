// xlamesh_pjrt.c: see xlamesh_pjrt.h.
#include "xlamesh_pjrt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

char* xm_errorf(const char* format, ...) {
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

char* xm_probe(const char* path, const PJRT_Api** api, size_t* struct_size, int* major, int* minor,
               int* code) {
  if (path == NULL || api == NULL || struct_size == NULL || major == NULL || minor == NULL ||
      code == NULL) {
    if (code != NULL) *code = XM_ERR_BAD_ARGUMENT;
    return xm_errorf("xm_probe: NULL argument");
  }
  dlerror();  // clear
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char* why = dlerror();
    *code = XM_ERR_DLOPEN;
    return xm_errorf("%s", why != NULL ? why : "dlopen failed");
  }
  typedef const PJRT_Api* (*get_api_fn)(void);
  get_api_fn get_api = (get_api_fn)dlsym(handle, "GetPjrtApi");
  if (get_api == NULL) {
    dlclose(handle);
    *code = XM_ERR_NO_SYMBOL;
    return xm_errorf("no GetPjrtApi symbol: not a PJRT plugin");
  }
  const PJRT_Api* a = get_api();
  if (a == NULL) {
    dlclose(handle);
    *code = XM_ERR_NULL_API;
    return xm_errorf("GetPjrtApi returned NULL");
  }
  // Every field is read while the library is loaded; on failure it is closed only afterwards.
  size_t size = a->struct_size;
  if (size < XM_MIN_API_STRUCT_SIZE) {
    dlclose(handle);
    *code = XM_ERR_SMALL_API;
    return xm_errorf("PJRT_Api struct_size %zu is smaller than %d, the size at PJRT C API 0.%d", size,
                  XM_MIN_API_STRUCT_SIZE, XM_MIN_API_MINOR);
  }
  *api = a;
  *struct_size = size;
  *major = a->pjrt_api_version.major_version;
  *minor = a->pjrt_api_version.minor_version;
  return NULL;  // the handle stays open: plugins live as long as the process
}

int xm_has(const PJRT_Api* api, size_t offset) {
  if (api == NULL || offset + sizeof(void*) > api->struct_size) return 0;
  void* fn;
  memcpy(&fn, (const char*)api + offset, sizeof fn);
  return fn != NULL;
}

void xm_error_take(const PJRT_Api* api, PJRT_Error* err, int* code, char** msg) {
  *code = PJRT_Error_Code_UNKNOWN;
  *msg = NULL;
  if (err == NULL) return;
  PJRT_Error_Message_Args m = {0};
  m.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  m.error = err;
  api->PJRT_Error_Message(&m);
  *msg = xm_errorf("%.*s", (int)m.message_size, m.message != NULL ? m.message : "");
  PJRT_Error_GetCode_Args g = {0};
  g.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  g.error = err;
  PJRT_Error* code_err = api->PJRT_Error_GetCode(&g);
  if (code_err == NULL) {
    *code = (int)g.code;
  } else {
    PJRT_Error_Destroy_Args d = {0};
    d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
    d.error = code_err;
    api->PJRT_Error_Destroy(&d);
  }
  PJRT_Error_Destroy_Args d = {0};
  d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  d.error = err;
  api->PJRT_Error_Destroy(&d);
}

#define XM_DEFINE(name)                                                        \
  PJRT_Error* xm_##name(const PJRT_Api* api, PJRT_##name##_Args* args) {       \
    args->struct_size = PJRT_##name##_Args_STRUCT_SIZE;                        \
    return api->PJRT_##name(args);                                             \
  }
XM_FUNCTIONS(XM_DEFINE)
#undef XM_DEFINE

void xm_serialized_free(PJRT_Executable_Serialize_Args* args) {
  if (args->serialized_executable_deleter != NULL && args->serialized_executable != NULL) {
    args->serialized_executable_deleter(args->serialized_executable);
  }
}

// has reports whether api has the function at offset off (a shorthand for xm_has).
#define XM_HAS(api, name) xm_has((api), offsetof(PJRT_Api, PJRT_##name))

static void destroy_error(const PJRT_Api* api, PJRT_Error* err) {
  if (err == NULL) return;
  PJRT_Error_Destroy_Args d = {0};
  d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  d.error = err;
  api->PJRT_Error_Destroy(&d);
}

static void destroy_event(const PJRT_Api* api, PJRT_Event* ev) {
  if (ev == NULL) return;
  PJRT_Event_Destroy_Args d = {0};
  d.event = ev;
  destroy_error(api, xm_Event_Destroy(api, &d));
}

// await_event waits for ev, destroys it and returns its error.
static PJRT_Error* await_event(const PJRT_Api* api, PJRT_Event* ev) {
  if (ev == NULL) return NULL;
  PJRT_Event_Await_Args a = {0};
  a.event = ev;
  PJRT_Error* err = xm_Event_Await(api, &a);
  destroy_event(api, ev);
  return err;
}

// ---- Staging memory ----

#define XM_POOL_SLOTS 64

// The pool of idle blocks. Pooled blocks are mappings of their own (mmap), so that giving one
// back to the operating system (munmap) always returns its memory; blocks idle longer than
// idle_ns are given back by the reaper thread, started with the first block pooled.
static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;  // wakes the reaper: a block was pooled, or the idle time changed
  void* block[XM_POOL_SLOTS];
  size_t cap[XM_POOL_SLOTS];
  int64_t since[XM_POOL_SLOTS];  // when the block was pooled (CLOCK_MONOTONIC ns)
  int n;
  int64_t idle;     // bytes in block[0..n)
  int64_t limit;    // most idle bytes kept
  int64_t idle_ns;  // longest a block stays idle; <= 0: no limit
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, {0}, {0}, 0, 0,
          XM_STAGING_IDLE_LIMIT, XM_STAGING_IDLE_NS};

static atomic_int_fast64_t staging_live_blocks, staging_live_bytes;
static pthread_once_t reaper_once = PTHREAD_ONCE_INIT;

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// staging_class rounds a pooled size up to its class: 8 classes per power of two.
static size_t staging_class(size_t size) {
  size_t g = (size_t)1 << 16;
  while (g * 16 <= size) g <<= 1;
  return (size + g - 1) / g * g;
}

// map_block maps a pooled block of cap bytes (NULL when out of memory), asking for huge pages
// where the kernel gives them on request: 512 times fewer page faults on the first write.
static void* map_block(size_t cap) {
  void* p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, cap, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
  return p;
}

// pool_take_expired moves the blocks idle since before cutoff (all of them with cutoff
// INT64_MAX) and those beyond the idle limit out of the pool into drop (caller holds pool.mu)
// and returns how many; the caller unmaps them after unlocking.
static int pool_take_expired(int64_t cutoff, void** drop, size_t* dropcap) {
  int ndrop = 0;
  for (int i = pool.n - 1; i >= 0; i--) {
    if (pool.since[i] < cutoff) {
      drop[ndrop] = pool.block[i];
      dropcap[ndrop++] = pool.cap[i];
      pool.idle -= (int64_t)pool.cap[i];
      pool.n--;
      pool.block[i] = pool.block[pool.n];
      pool.cap[i] = pool.cap[pool.n];
      pool.since[i] = pool.since[pool.n];
    }
  }
  while (pool.n > 0 && pool.idle > pool.limit) {  // the oldest first would be fairer; any will do
    pool.n--;
    pool.idle -= (int64_t)pool.cap[pool.n];
    drop[ndrop] = pool.block[pool.n];
    dropcap[ndrop++] = pool.cap[pool.n];
  }
  return ndrop;
}

static void unmap_all(void** drop, const size_t* dropcap, int n) {
  for (int i = 0; i < n; i++) munmap(drop[i], dropcap[i]);
}

// reaper gives back blocks idle longer than pool.idle_ns, sleeping until the next one is due.
static void* reaper(void* unused) {
  (void)unused;
  void* drop[XM_POOL_SLOTS];
  size_t dropcap[XM_POOL_SLOTS];
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    int64_t now = monotonic_ns();
    int ndrop = pool.idle_ns > 0 ? pool_take_expired(now - pool.idle_ns + 1, drop, dropcap) : 0;
    if (ndrop > 0) {
      pthread_mutex_unlock(&pool.mu);
      unmap_all(drop, dropcap, ndrop);
      pthread_mutex_lock(&pool.mu);
      continue;
    }
    if (pool.n == 0 || pool.idle_ns <= 0) {
      pthread_cond_wait(&pool.cv, &pool.mu);
      continue;
    }
    int64_t due = pool.since[0];
    for (int i = 1; i < pool.n; i++) {
      if (pool.since[i] < due) due = pool.since[i];
    }
    // The condition variable waits on CLOCK_REALTIME: sleep the remaining monotonic time from now
    // (at most an hour at a time, so that a huge idle time cannot overflow the deadline).
    int64_t wait = pool.idle_ns - (now - due);
    if (wait > (int64_t)3600 * 1000000000) wait = (int64_t)3600 * 1000000000;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + wait;
    ts.tv_sec = (time_t)(at / 1000000000);
    ts.tv_nsec = (long)(at % 1000000000);
    pthread_cond_timedwait(&pool.cv, &pool.mu, &ts);
  }
  return NULL;
}

static void start_reaper(void) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 << 10);
  pthread_t t;
  // Without the thread, xm_staging_free still gives back expired blocks whenever it runs.
  pthread_create(&t, &attr, reaper, NULL);
  pthread_attr_destroy(&attr);
}

void* xm_staging_alloc(size_t size, size_t* cap) {
  void* p = NULL;
  // The same rounded size decides malloc or pool here and in xm_staging_free: below
  // XM_STAGING_POOL_MIN, malloc; from it on, a pooled class.
  if (size <= XM_STAGING_POOL_MIN - XM_STAGING_ALIGN) {
    size_t small = size == 0 ? XM_STAGING_ALIGN : (size + XM_STAGING_ALIGN - 1) / XM_STAGING_ALIGN * XM_STAGING_ALIGN;
    p = aligned_alloc(XM_STAGING_ALIGN, small);
    if (p == NULL) return NULL;
    *cap = small;
  } else {
    size_t c = staging_class(size);
    pthread_mutex_lock(&pool.mu);
    for (int i = pool.n - 1; i >= 0; i--) {
      if (pool.cap[i] == c) {
        p = pool.block[i];
        pool.idle -= (int64_t)c;
        pool.n--;
        pool.block[i] = pool.block[pool.n];
        pool.cap[i] = pool.cap[pool.n];
        pool.since[i] = pool.since[pool.n];
        break;
      }
    }
    pthread_mutex_unlock(&pool.mu);
    if (p == NULL) {
      p = map_block(c);
      if (p == NULL) return NULL;
    }
    *cap = c;
  }
  atomic_fetch_add(&staging_live_blocks, 1);
  atomic_fetch_add(&staging_live_bytes, (int64_t)*cap);
  return p;
}

void xm_staging_free(void* block, size_t cap) {
  if (block == NULL) return;
  atomic_fetch_sub(&staging_live_blocks, 1);
  atomic_fetch_sub(&staging_live_bytes, (int64_t)cap);
  if (cap < XM_STAGING_POOL_MIN) {
    free(block);
    return;
  }
  pthread_once(&reaper_once, start_reaper);
  void* drop[XM_POOL_SLOTS];
  size_t dropcap[XM_POOL_SLOTS];
  int64_t now = monotonic_ns();
  pthread_mutex_lock(&pool.mu);
  int ndrop = pool.idle_ns > 0 ? pool_take_expired(now - pool.idle_ns + 1, drop, dropcap) : 0;
  if (pool.n < XM_POOL_SLOTS && pool.idle + (int64_t)cap <= pool.limit) {
    pool.block[pool.n] = block;
    pool.cap[pool.n] = cap;
    pool.since[pool.n] = now;
    pool.n++;
    pool.idle += (int64_t)cap;
    block = NULL;
    pthread_cond_signal(&pool.cv);
  }
  pthread_mutex_unlock(&pool.mu);
  unmap_all(drop, dropcap, ndrop);
  if (block != NULL) munmap(block, cap);
}

void xm_staging_stats(int64_t* live_blocks, int64_t* live_bytes, int64_t* idle_bytes) {
  *live_blocks = atomic_load(&staging_live_blocks);
  *live_bytes = atomic_load(&staging_live_bytes);
  pthread_mutex_lock(&pool.mu);
  *idle_bytes = pool.idle;
  pthread_mutex_unlock(&pool.mu);
}

void xm_staging_set_idle_limit(int64_t bytes) {
  void* drop[XM_POOL_SLOTS];
  size_t dropcap[XM_POOL_SLOTS];
  pthread_mutex_lock(&pool.mu);
  pool.limit = bytes < 0 ? 0 : bytes;
  int ndrop = pool_take_expired(INT64_MIN, drop, dropcap);  // none expired: only the limit
  pthread_mutex_unlock(&pool.mu);
  unmap_all(drop, dropcap, ndrop);
}

int64_t xm_staging_set_idle_time(int64_t ns) {
  pthread_mutex_lock(&pool.mu);
  int64_t old = pool.idle_ns;
  pool.idle_ns = ns;
  pthread_cond_signal(&pool.cv);  // the reaper recomputes its deadline
  pthread_mutex_unlock(&pool.mu);
  return old;
}

typedef struct {
  const PJRT_Api* api;
  PJRT_Event* event;
  void* block;
  size_t cap;
} staging_done_arg;

// staging_done runs on a plugin thread when the plugin is done with a staging block.
static void staging_done(PJRT_Error* err, void* user_arg) {
  staging_done_arg* a = (staging_done_arg*)user_arg;
  destroy_error(a->api, err);
  destroy_event(a->api, a->event);
  xm_staging_free(a->block, a->cap);
  free(a);
}

PJRT_Error* xm_buffer_from_staging(const PJRT_Api* api, PJRT_Client_BufferFromHostBuffer_Args* args,
                                   void* block, size_t cap) {
  args->buffer = NULL;
  args->done_with_host_buffer = NULL;
  staging_done_arg* a = malloc(sizeof *a);
  if (a == NULL) {  // reported by args->buffer == NULL with no error
    xm_staging_free(block, cap);
    return NULL;
  }
  args->data = block;
  args->host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
  PJRT_Error* err = xm_Client_BufferFromHostBuffer(api, args);
  if (err != NULL) {
    free(a);
    xm_staging_free(block, cap);
    args->buffer = NULL;
    return err;
  }
  if (args->done_with_host_buffer == NULL) {
    // No word on when the plugin is done with the block: it may be the buffer's memory, so it
    // is never freed (it stays counted live) rather than freed under the buffer.
    free(a);
    return NULL;
  }
  a->api = api;
  a->event = args->done_with_host_buffer;
  a->block = block;
  a->cap = cap;
  PJRT_Event_OnReady_Args on = {0};
  on.event = args->done_with_host_buffer;
  on.callback = staging_done;
  on.user_arg = a;
  err = xm_Event_OnReady(api, &on);
  if (err == NULL) return NULL;  // staging_done owns a, the event and the block now
  // No callback: give the buffer up, which ends the plugin's use of the block, then free it.
  free(a);
  PJRT_Buffer_Destroy_Args d = {0};
  d.buffer = args->buffer;
  destroy_error(api, xm_Buffer_Destroy(api, &d));
  args->buffer = NULL;
  destroy_error(api, await_event(api, args->done_with_host_buffer));
  args->done_with_host_buffer = NULL;
  xm_staging_free(block, cap);
  return err;
}

// ---- Direct reads of host-memory buffers ----

// refs_mu serializes external-reference calls: the C API wrapper keeps a buffer's external
// references in a plain list, which two threads reading the same buffer would corrupt.
static pthread_mutex_t refs_mu = PTHREAD_MUTEX_INITIALIZER;

static PJRT_Error* ref_buffer(const PJRT_Api* api, PJRT_Buffer* buf, int up) {
  PJRT_Error* err;
  pthread_mutex_lock(&refs_mu);
  if (up) {
    PJRT_Buffer_IncreaseExternalReferenceCount_Args inc = {0};
    inc.buffer = buf;
    err = xm_Buffer_IncreaseExternalReferenceCount(api, &inc);
  } else {
    PJRT_Buffer_DecreaseExternalReferenceCount_Args dec = {0};
    dec.buffer = buf;
    err = xm_Buffer_DecreaseExternalReferenceCount(api, &dec);
  }
  pthread_mutex_unlock(&refs_mu);
  return err;
}

// host_viewable reports whether buf's memory is host memory laid out dense row-major over rank
// dimensions and size bytes.
static int host_viewable(const PJRT_Api* api, PJRT_Buffer* buf, int64_t size, int32_t rank) {
  PJRT_Buffer_IsOnCpu_Args oc = {0};
  oc.buffer = buf;
  PJRT_Error* err = xm_Buffer_IsOnCpu(api, &oc);
  if (err != NULL || !oc.is_on_cpu) {
    destroy_error(api, err);
    return 0;
  }
  PJRT_Buffer_GetMemoryLayout_Args ml = {0};
  ml.buffer = buf;
  if ((err = xm_Buffer_GetMemoryLayout(api, &ml)) != NULL) {
    destroy_error(api, err);
    return 0;
  }
  if (ml.layout.type != PJRT_Buffer_MemoryLayout_Type_Tiled || ml.layout.tiled.num_tiles != 0 ||
      ml.layout.tiled.minor_to_major_size != (size_t)rank) {
    return 0;
  }
  for (int32_t i = 0; i < rank; i++) {
    if (ml.layout.tiled.minor_to_major[i] != rank - 1 - i) return 0;
  }
  PJRT_Buffer_OnDeviceSizeInBytes_Args os = {0};
  os.buffer = buf;
  if ((err = xm_Buffer_OnDeviceSizeInBytes(api, &os)) != NULL) {
    destroy_error(api, err);
    return 0;
  }
  return (int64_t)os.on_device_size_in_bytes == size;
}

PJRT_Error* xm_host_views(const PJRT_Api* api, PJRT_Buffer* const* bufs, const int64_t* sizes,
                          const int32_t* ranks, size_t n, void** ptrs, int* ok, size_t* failed) {
  *ok = 0;
  *failed = 0;
  if (!XM_HAS(api, Buffer_IsOnCpu) || !XM_HAS(api, Buffer_GetMemoryLayout) ||
      !XM_HAS(api, Buffer_OnDeviceSizeInBytes) || !XM_HAS(api, Buffer_ReadyEvent) ||
      !XM_HAS(api, Buffer_UnsafePointer)) {
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (!host_viewable(api, bufs[i], sizes[i], ranks[i])) return NULL;
  }
  // Every buffer's wait starts before the first is awaited; all events are consumed.
  PJRT_Error* first = NULL;
  PJRT_Event* evs[64];
  for (size_t lo = 0; lo < n; lo += 64) {
    size_t hi = n - lo < 64 ? n : lo + 64;
    for (size_t i = lo; i < hi; i++) {
      PJRT_Buffer_ReadyEvent_Args re = {0};
      re.buffer = bufs[i];
      PJRT_Error* err = xm_Buffer_ReadyEvent(api, &re);
      evs[i - lo] = re.event;
      if (err != NULL) {
        if (first == NULL) {
          first = err;
          *failed = i;
        } else {
          destroy_error(api, err);
        }
        evs[i - lo] = NULL;
      }
    }
    for (size_t i = lo; i < hi; i++) {
      PJRT_Error* err = await_event(api, evs[i - lo]);
      if (err != NULL) {
        if (first == NULL) {
          first = err;
          *failed = i;
        } else {
          destroy_error(api, err);
        }
      }
    }
  }
  if (first != NULL) return first;
  int refs = XM_HAS(api, Buffer_IncreaseExternalReferenceCount) &&
             XM_HAS(api, Buffer_DecreaseExternalReferenceCount);
  for (size_t i = 0; i < n; i++) {
    PJRT_Error* err = NULL;
    if (refs) err = ref_buffer(api, bufs[i], 1);
    PJRT_Buffer_UnsafePointer_Args up = {0};
    if (err == NULL) {
      up.buffer = bufs[i];
      err = xm_Buffer_UnsafePointer(api, &up);
      if (err != NULL && refs) destroy_error(api, ref_buffer(api, bufs[i], 0));
    }
    if (err != NULL || (up.buffer_pointer == 0 && sizes[i] > 0)) {
      destroy_error(api, err);
      xm_host_views_release(api, bufs, i);  // not readable in place after all
      return NULL;
    }
    ptrs[i] = (void*)up.buffer_pointer;
  }
  *ok = 1;
  return NULL;
}

void xm_host_views_release(const PJRT_Api* api, PJRT_Buffer* const* bufs, size_t n) {
  if (!XM_HAS(api, Buffer_IncreaseExternalReferenceCount) ||
      !XM_HAS(api, Buffer_DecreaseExternalReferenceCount)) {
    return;
  }
  for (size_t i = 0; i < n; i++) destroy_error(api, ref_buffer(api, bufs[i], 0));
}

// ---- Executions in flight ----

struct xm_inflight {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n, max;
};

xm_inflight* xm_inflight_new(int max) {
  xm_inflight* fl = calloc(1, sizeof *fl);
  if (fl == NULL) return NULL;
  pthread_mutex_init(&fl->mu, NULL);
  pthread_cond_init(&fl->cv, NULL);
  fl->max = max < 1 ? 1 : max;
  return fl;
}

void xm_inflight_drain(xm_inflight* fl) {
  pthread_mutex_lock(&fl->mu);
  while (fl->n > 0) pthread_cond_wait(&fl->cv, &fl->mu);
  pthread_mutex_unlock(&fl->mu);
}

int xm_inflight_count(xm_inflight* fl) {
  pthread_mutex_lock(&fl->mu);
  int n = fl->n;
  pthread_mutex_unlock(&fl->mu);
  return n;
}

void xm_inflight_free(xm_inflight* fl) {
  if (fl == NULL) return;
  pthread_cond_destroy(&fl->cv);
  pthread_mutex_destroy(&fl->mu);
  free(fl);
}

static void inflight_acquire(xm_inflight* fl) {
  pthread_mutex_lock(&fl->mu);
  while (fl->n >= fl->max) pthread_cond_wait(&fl->cv, &fl->mu);
  fl->n++;
  pthread_mutex_unlock(&fl->mu);
}

static void inflight_release(xm_inflight* fl) {
  pthread_mutex_lock(&fl->mu);
  fl->n--;
  pthread_cond_broadcast(&fl->cv);  // waiting executions and drains
  pthread_mutex_unlock(&fl->mu);
}

struct xm_unfinished {
  atomic_int refs;  // the owner's reference (until dropped) + the executions counted
};

xm_unfinished* xm_unfinished_new(void) {
  xm_unfinished* un = malloc(sizeof *un);
  if (un != NULL) atomic_init(&un->refs, 1);
  return un;
}

int xm_unfinished_count(xm_unfinished* un) { return atomic_load(&un->refs) - 1; }

static void unfinished_unref(xm_unfinished* un) {
  if (un != NULL && atomic_fetch_sub(&un->refs, 1) == 1) free(un);
}

void xm_unfinished_drop(xm_unfinished* un) { unfinished_unref(un); }

// execution_end gives back what an execution holds while it runs: its in-flight slot and its
// count in its executable's counter.
static void execution_end(xm_inflight* fl, xm_unfinished* un) {
  unfinished_unref(un);
  inflight_release(fl);
}

// countdown ends an execution when its last device event has fired. It walks the events in
// order with one callback outstanding at a time: an event found ready (PJRT_Event_IsReady) is
// consumed at once, and the walk waits (PJRT_Event_OnReady) only on one that is not. The
// devices of one program finish close together, so that an execution usually costs a single
// callback, not one per device. One block: the header, then the nd events.
typedef struct {
  const PJRT_Api* api;
  xm_inflight* fl;
  xm_unfinished* un;
  size_t next, nd;  // the event the walk is at; the number of events
  PJRT_Event* events[];
} countdown;

static void countdown_fired(PJRT_Error* err, void* user_arg);

// countdown_walk consumes ready events from c->next on; it registers a callback on the first
// that is not ready and returns (c then belongs to the callback), or ends the execution and frees
// c when none is left.
static void countdown_walk(countdown* c) {
  const PJRT_Api* api = c->api;
  while (c->next < c->nd) {
    PJRT_Event* ev = c->events[c->next];
    int ready = ev == NULL;
    if (!ready && XM_HAS(api, Event_IsReady)) {
      PJRT_Event_IsReady_Args r = {0};
      r.event = ev;
      PJRT_Error* e = xm_Event_IsReady(api, &r);
      ready = e == NULL && r.is_ready;
      destroy_error(api, e);
    }
    if (!ready) {
      PJRT_Event_OnReady_Args on = {0};
      on.event = ev;
      on.callback = countdown_fired;
      on.user_arg = c;
      PJRT_Error* e = xm_Event_OnReady(api, &on);
      if (e == NULL) return;  // countdown_fired goes on from here; c may be gone already
      destroy_error(api, e);
      destroy_error(api, await_event(api, ev));  // no callback: wait for it here
    } else if (ev != NULL) {
      destroy_event(api, ev);  // the results' buffers carry any error
    }
    c->next++;
  }
  execution_end(c->fl, c->un);
  free(c);
}

static void countdown_fired(PJRT_Error* err, void* user_arg) {
  countdown* c = (countdown*)user_arg;
  destroy_error(c->api, err);  // the results' buffers carry the error
  destroy_event(c->api, c->events[c->next]);
  c->next++;
  countdown_walk(c);
}

#define XM_STACK_DEVICES 64

PJRT_Error* xm_execute(const PJRT_Api* api, xm_inflight* fl, xm_unfinished* un,
                       PJRT_LoadedExecutable* exe, PJRT_Buffer* const* args, size_t nd, size_t na,
                       const int64_t* keep, size_t nkeep, PJRT_Buffer** outs, size_t no,
                       int* started) {
  *started = 0;
  PJRT_Buffer* const* arg_rows_stack[XM_STACK_DEVICES];
  PJRT_Buffer** out_rows_stack[XM_STACK_DEVICES];
  PJRT_Event* events_stack[XM_STACK_DEVICES];
  PJRT_Buffer* const** arg_rows = arg_rows_stack;
  PJRT_Buffer*** out_rows = out_rows_stack;
  PJRT_Event** events = events_stack;
  void* heap = NULL;
  if (nd > XM_STACK_DEVICES) {
    heap = calloc(nd, sizeof *arg_rows + sizeof *out_rows + sizeof *events);
    if (heap == NULL) return NULL;  // *started stays 0: out of memory
    arg_rows = heap;
    out_rows = (PJRT_Buffer***)(arg_rows + nd);
    events = (PJRT_Event**)(out_rows + nd);
  }
  static PJRT_Buffer* const no_args[1] = {NULL};
  static PJRT_Buffer* no_outs[1];
  for (size_t d = 0; d < nd; d++) {
    arg_rows[d] = na > 0 ? args + d * na : no_args;
    out_rows[d] = no > 0 ? outs + d * no : no_outs;
    events[d] = NULL;
  }
  PJRT_ExecuteOptions options;
  memset(&options, 0, sizeof options);
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  if (nkeep > 0) {
    options.non_donatable_input_indices = keep;
    options.num_non_donatable_input_indices = nkeep;
  }
  PJRT_LoadedExecutable_Execute_Args ex;
  memset(&ex, 0, sizeof ex);
  ex.executable = exe;
  ex.options = &options;
  ex.argument_lists = (PJRT_Buffer* const* const*)arg_rows;
  ex.num_devices = nd;
  ex.num_args = na;
  ex.output_lists = (PJRT_Buffer** const*)out_rows;
  if (fl == NULL) {  // no completion events, no accounting
    PJRT_Error* err = xm_LoadedExecutable_Execute(api, &ex);
    *started = err == NULL;
    free(heap);
    return err;
  }
  // The countdown is allocated before the execution starts: past that point nothing may fail.
  countdown* c = NULL;
  if (no > 0 && XM_HAS(api, Event_OnReady)) {
    c = malloc(sizeof *c + nd * sizeof c->events[0]);
    if (c == NULL) {
      free(heap);
      return NULL;  // *started stays 0: out of memory
    }
    for (size_t d = 0; d < nd; d++) c->events[d] = NULL;
    events = c->events;  // PJRT writes the events straight into the countdown
  }
  ex.device_complete_events = events;
  inflight_acquire(fl);
  if (un != NULL) atomic_fetch_add(&un->refs, 1);
  PJRT_Error* err = xm_LoadedExecutable_Execute(api, &ex);
  if (err != NULL) {
    execution_end(fl, un);
    free(c);
    free(heap);
    return err;
  }
  *started = 1;
  if (c == NULL) {
    // Wait here: for the error of a program without results, or for lack of callbacks.
    PJRT_Error* first = NULL;
    for (size_t d = 0; d < nd; d++) {
      PJRT_Error* e = await_event(api, events[d]);
      if (e != NULL && first == NULL) {
        first = e;
      } else {
        destroy_error(api, e);
      }
    }
    execution_end(fl, un);
    free(heap);
    return no == 0 ? first : (destroy_error(api, first), NULL);
  }
  c->api = api;
  c->fl = fl;
  c->un = un;
  c->next = 0;
  c->nd = nd;
  countdown_walk(c);  // c belongs to the walk now
  free(heap);
  return NULL;
}

PJRT_Error* xm_buffers_await(const PJRT_Api* api, PJRT_Buffer* const* bufs, size_t n, size_t* failed) {
  *failed = 0;
  for (size_t i = 0; i < n; i++) {
    PJRT_Buffer_ReadyEvent_Args re = {0};
    re.buffer = bufs[i];
    PJRT_Error* err = xm_Buffer_ReadyEvent(api, &re);
    if (err == NULL) err = await_event(api, re.event);
    if (err != NULL) {
      *failed = i;
      return err;
    }
  }
  return NULL;
}

PJRT_Error* xm_buffer_destroy(const PJRT_Api* api, PJRT_Buffer* buffer) {
  PJRT_Buffer_Destroy_Args d = {0};
  d.buffer = buffer;
  return xm_Buffer_Destroy(api, &d);
}
