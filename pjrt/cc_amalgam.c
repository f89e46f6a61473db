// The C sources of ../cc, compiled into this package by cgo (cgo only builds files in the
// package directory). Bazel builds the same file as //cc:xlamesh_pjrt. The go command's cache
// does not see ../cc: after editing it run `go generate ./pjrt`, whose cc_sources.go makes the
// go command compile this again (and pjrt's tests fail until then).
#include "../cc/xlamesh_pjrt.c"
#include "../cc/xlamesh_profiler.c"
#include "../cc/xlamesh_lapack.c"
