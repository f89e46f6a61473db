package pjrttest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
)

// EnvPlatform names the environment variable that says which platform the integration tests run
// on: "cpu" (the default when it is unset) or "gpu" (`make test-gpu` sets it, together with
// XLAMESH_PJRT_PLUGIN pointing at the CUDA plugin).
const EnvPlatform = "XLAMESH_TEST_PLATFORM"

var (
	mu      sync.Mutex
	clients = map[int]*pjrt.Client{} // by device count; the one GPU client under key 0
)

// Platform returns the platform named by $XLAMESH_TEST_PLATFORM: "cpu" when it is unset, else
// "cpu" or "gpu". Any other value is an error.
func Platform() (string, error) {
	switch p := os.Getenv(EnvPlatform); p {
	case "", "cpu":
		return "cpu", nil
	case "gpu":
		return "gpu", nil
	default:
		return "", fmt.Errorf("pjrttest: %s=%q: want cpu or gpu", EnvPlatform, p)
	}
}

// Open opens a new client for a test that closes it itself (an Example): on "cpu" one with n CPU
// devices; on "gpu" one with every GPU the plugin sees, which must be at least n. No create option
// is sent to a GPU plugin, which rejects the ones it does not know. The error says how to install
// the plugin when it is missing.
func Open(n int) (*pjrt.Client, error) {
	platform, err := Platform()
	if err != nil {
		return nil, err
	}
	c, err := openPlatform(platform, n)
	if err != nil {
		return nil, err
	}
	if err := check(c, platform, n); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// openPlatform opens a client on platform, asking a CPU plugin for n devices.
func openPlatform(platform string, n int) (*pjrt.Client, error) {
	useRepoCache()
	var opts []pjrt.Option
	if platform == "cpu" {
		opts = append(opts, pjrt.WithCPUDeviceCount(n))
	}
	c, err := pjrt.Open(opts...)
	switch {
	case err != nil && platform == "gpu":
		return nil, fmt.Errorf("integration tests with %s=gpu need a GPU PJRT plugin in %s and a GPU: %w", EnvPlatform, pjrt.EnvPlugin, err)
	case err != nil:
		return nil, fmt.Errorf("integration tests need XLA's CPU PJRT plugin: %w", err)
	}
	return c, nil
}

// check says whether c is a client of platform with the n devices a test asked for.
func check(c *pjrt.Client, platform string, n int) error {
	got := len(c.Devices())
	switch {
	case platform == "cpu" && c.Platform() != "cpu":
		return fmt.Errorf("pjrttest: the client from %s is %s, not cpu; set %s=gpu for a GPU plugin", c.Plugin().Path(), c.Platform(), EnvPlatform)
	case platform == "gpu" && c.Platform() == "cpu":
		return fmt.Errorf("pjrttest: %s=gpu, but the client from %s is cpu; set %s to a GPU plugin (make test-gpu does)", EnvPlatform, c.Plugin().Path(), pjrt.EnvPlugin)
	case platform == "cpu" && got != n:
		return fmt.Errorf("pjrttest: asked %s for %d CPU devices, got %d", c.Plugin().Path(), n, got)
	case got < n:
		return fmt.Errorf("pjrttest: the test needs %d devices; the %s client from %s has %d", n, c.Platform(), c.Plugin().Path(), got)
	}
	return nil
}

// Client returns the client with pjrt.DefaultCPUDeviceCount devices shared by all tests of the
// test binary, opening it on first use. It fails the test when the plugin cannot be loaded.
func Client(t testing.TB) *pjrt.Client {
	t.Helper()
	return ClientWithDevices(t, pjrt.DefaultCPUDeviceCount)
}

// ClientWithDevices is Client with n devices. On "cpu" (see Platform) clients are shared per
// device count and have exactly n CPU devices; on "gpu" all tests share one client with every GPU
// the plugin sees, and a test fails when there are fewer than n. Clients stay open until the
// process exits.
func ClientWithDevices(t testing.TB, n int) *pjrt.Client {
	t.Helper()
	c, fresh, err := open(n)
	if fresh {
		kind := "CPU"
		if c.Platform() != "cpu" {
			kind = "GPU"
		}
		major, minor := c.Plugin().APIVersion()
		t.Logf("pjrttest: %s with %d %s devices from %s (PJRT API %d.%d)", c.Platform(), len(c.Devices()), kind, c.Plugin().Path(), major, minor)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// open returns the shared client for a test needing n devices, whether this call opened it, and
// an error when there is no client or it does not fit the test.
func open(n int) (*pjrt.Client, bool, error) {
	platform, err := Platform()
	if err != nil {
		return nil, false, err
	}
	key := n
	if platform == "gpu" {
		key = 0
	}
	mu.Lock()
	defer mu.Unlock()
	c, ok := clients[key]
	if !ok {
		if c, err = openPlatform(platform, n); err != nil {
			return nil, false, err
		}
		clients[key] = c
	}
	return c, !ok, check(c, platform, n)
}
