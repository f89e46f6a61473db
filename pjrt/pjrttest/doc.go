// Package pjrttest gives integration tests a real PJRT client: by default on XLA's CPU plugin, or
// on a GPU plugin when XLAMESH_TEST_PLATFORM=gpu (`make test-gpu`).
//
// It sits beside package pjrt, for tests only: they call Client(t) for the shared client (8 CPU
// devices, $XLAMESH_TEST_DEVICES of them, or every GPU) and follow its device count, fitting their
// meshes with FitShape; NeedDevices sets aside a test that needs more devices than the host has,
// ClientWithDevices asks for an exact CPU count. Tests of deadlines use SpinModule, RunChild and
// Within. Examples, which close their client, call Open. A package's TestMain exits with
// CheckLeaks(m, name), which fails the run when its tests left device buffers alive. The plugin is
// pjrt.Open's default, or $XLAMESH_PJRT_PLUGIN. When the plugin is missing the test
// fails (it never skips, in CI or anywhere) with the message that says how to install it; on first
// use it logs the plugin path, device count and PJRT API version, which `make test` prints per
// package.
package pjrttest
