// The C sources of ../cc, compiled into this package by cgo (cgo only builds files in the
// package directory). Bazel builds the same file as //cc:xlamesh_pjrt.
#include "../cc/xlamesh_pjrt.c"
