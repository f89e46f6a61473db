// fake.c: shared libraries that look like PJRT plugins from the outside, for the load-time
// checks of pjrt/plugin_test.go. Built at test time with -DFAKE_<KIND>; never a real plugin.
#include <string.h>

#include "xla/pjrt/c/pjrt_c_api.h"

static PJRT_Api api;

const PJRT_Api* GetPjrtApi(void) {
  memset(&api, 0, sizeof api);
#if defined(FAKE_TINY)
  api.struct_size = 64;  // far smaller than any real table
  api.pjrt_api_version.minor_version = 81;
#elif defined(FAKE_NULL_FUNCTIONS)
  api.struct_size = sizeof api;  // a full table whose function pointers are all NULL
  api.pjrt_api_version.minor_version = 114;
#elif defined(FAKE_MAJOR)
  api.struct_size = sizeof api;
  api.pjrt_api_version.major_version = 1;
  api.pjrt_api_version.minor_version = 0;
#elif defined(FAKE_OLD)
  api.struct_size = sizeof api;
  api.pjrt_api_version.minor_version = 54;
#elif defined(FAKE_NULL_API)
  return NULL;
#endif
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  return &api;
}
