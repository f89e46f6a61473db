package pjrttest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
)

var (
	mu      sync.Mutex
	clients = map[int]*pjrt.Client{}
)

// Client returns the CPU client with pjrt.DefaultCPUDeviceCount devices shared by all tests of the
// test binary, opening it on first use. It fails the test when the plugin cannot be loaded.
func Client(t testing.TB) *pjrt.Client {
	t.Helper()
	return ClientWithDevices(t, pjrt.DefaultCPUDeviceCount)
}

// ClientWithDevices is Client with n CPU devices; clients are shared per device count and stay
// open until the process exits.
func ClientWithDevices(t testing.TB, n int) *pjrt.Client {
	t.Helper()
	c, fresh, err := open(n)
	if err != nil {
		t.Fatal(err)
	}
	if fresh {
		major, minor := c.Plugin().APIVersion()
		t.Logf("pjrttest: %s with %d CPU devices from %s (PJRT API %d.%d)", c.Platform(), len(c.Devices()), c.Plugin().Path(), major, minor)
	}
	return c
}

// open returns the shared client with n devices and whether this call opened it.
func open(n int) (*pjrt.Client, bool, error) {
	mu.Lock()
	defer mu.Unlock()
	if c, ok := clients[n]; ok {
		return c, false, nil
	}
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(n))
	if err != nil {
		return nil, false, fmt.Errorf("integration tests need XLA's CPU PJRT plugin: %w", err)
	}
	clients[n] = c
	return c, true, nil
}
