// fake.c: shared libraries that pass for PJRT plugins until something gives them away, for the
// plugin-file cases of the hostile suite. Built at test time with -DFAKE_<KIND>; never a real
// plugin, and nothing here is ever meant to run past GetPjrtApi.
#include <stddef.h>
#include <string.h>

#include "xla/pjrt/c/pjrt_c_api.h"

#if defined(FAKE_DATA_SYMBOL)
// GetPjrtApi is data, not code: calling it jumps into a non-executable page.
const unsigned char GetPjrtApi[256] = {0};
#elif defined(FAKE_NO_SYMBOL)
// A shared object without GetPjrtApi.
int not_a_plugin(void) { return 42; }
#else
static PJRT_Api api;

const PJRT_Api* GetPjrtApi(void) {
  memset(&api, 0, sizeof api);
#if defined(FAKE_TINY)
  api.struct_size = 64;  // far smaller than any real table
  api.pjrt_api_version.minor_version = 81;
#elif defined(FAKE_ZERO_SIZE)
  api.struct_size = 0;
  api.pjrt_api_version.minor_version = 81;
#elif defined(FAKE_NULL_FUNCTIONS)
  api.struct_size = sizeof api;  // a full table whose function pointers are all NULL
  api.pjrt_api_version.minor_version = 114;
#elif defined(FAKE_HUGE_SIZE)
  api.struct_size = (size_t)1 << 40;  // claims a table far larger than the memory behind it
  api.pjrt_api_version.minor_version = 200;
#elif defined(FAKE_MAJOR)
  api.struct_size = sizeof api;
  api.pjrt_api_version.major_version = 1;
#elif defined(FAKE_OLD)
  api.struct_size = sizeof api;
  api.pjrt_api_version.minor_version = 54;
#elif defined(FAKE_NULL_API)
  return NULL;
#endif
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  return &api;
}
#endif
