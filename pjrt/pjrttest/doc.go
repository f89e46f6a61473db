// Package pjrttest gives integration tests a real PJRT client on XLA's CPU plugin.
//
// It sits beside package pjrt, for tests only: they call Client(t) for the shared 8-device client
// (ClientWithDevices for another count). When the plugin is missing the test fails (it never
// skips, in CI or anywhere) with the message that says how to install it; on first use it logs
// the plugin path, device count and PJRT API version, which `make test` prints per package.
package pjrttest
