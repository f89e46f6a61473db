package pjrttest

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
)

// EnvPlatform names the environment variable that says which platform the integration tests run
// on: "cpu" (the default when it is unset) or "gpu" (`make test-gpu` sets it, together with
// XLAMESH_PJRT_PLUGIN pointing at the CUDA plugin).
const EnvPlatform = "XLAMESH_TEST_PLATFORM"

// EnvDevices names the environment variable that sets, on "cpu", how many CPU devices the shared
// client of Client has (default pjrt.DefaultCPUDeviceCount): set to 1 or 2, the CPU plugin stands
// in for a GPU host with that many GPUs, so that the tests' following of Client's device count is
// checked without a GPU. On "gpu" the count is the plugin's and the variable must be unset.
const EnvDevices = "XLAMESH_TEST_DEVICES"

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

// Options returns the options that open a client of the test platform (see Platform) with n
// devices, for a test that opens a client of its own with further options (a compile cache, a
// logger): pjrt.WithCPUDeviceCount(n) on "cpu"; none on "gpu", whose plugin refuses the create
// options it does not know ("Unexpected option name passed to PJRT_Client_Create:
// cpu_device_count") and whose client has every GPU it sees, more or fewer than n. Unlike Open,
// it checks nothing about the client opened with them. Any other platform is an error.
func Options(n int) ([]pjrt.Option, error) {
	platform, err := Platform()
	if err != nil {
		return nil, err
	}
	useRepoCache()
	return platformOptions(platform, n), nil
}

// platformOptions returns Options' options on platform.
func platformOptions(platform string, n int) []pjrt.Option {
	if platform == "cpu" {
		return []pjrt.Option{pjrt.WithCPUDeviceCount(n)}
	}
	return nil
}

// openPlatform opens a client on platform, asking a CPU plugin for n devices.
func openPlatform(platform string, n int) (*pjrt.Client, error) {
	useRepoCache()
	c, err := pjrt.Open(platformOptions(platform, n)...)
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

// Devices returns the device count of Client's client on "cpu": $XLAMESH_TEST_DEVICES, or
// pjrt.DefaultCPUDeviceCount when it is unset. It is an error on "gpu" when the variable is set,
// and for a value that is not a count from 1 to pjrt.MaxCPUDeviceCount.
func Devices() (int, error) {
	platform, err := Platform()
	if err != nil {
		return 0, err
	}
	v, set := os.LookupEnv(EnvDevices)
	switch {
	case !set || v == "":
		return pjrt.DefaultCPUDeviceCount, nil
	case platform == "gpu":
		return 0, fmt.Errorf("pjrttest: %s=%s with %s=gpu: the GPU plugin decides the device count", EnvDevices, v, EnvPlatform)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > pjrt.MaxCPUDeviceCount {
		return 0, fmt.Errorf("pjrttest: %s=%q: want a device count from 1 to %d", EnvDevices, v, pjrt.MaxCPUDeviceCount)
	}
	return n, nil
}

// Client returns the client shared by all tests of the test binary, opening it on first use: on
// "cpu" one with Devices() CPU devices (8 unless $XLAMESH_TEST_DEVICES says otherwise), on "gpu"
// one with every GPU the plugin sees. Tests written against it follow len(c.Devices()): their
// meshes, device counts and expected values hold on 1 device as on 8. It fails the test when the
// plugin cannot be loaded.
func Client(t testing.TB) *pjrt.Client {
	t.Helper()
	n, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := Platform(); p == "gpu" {
		n = 1
	}
	return ClientWithDevices(t, n)
}

// NeedDevices is Client for a test that only means something on at least n devices (a mesh of
// that size, a golden computed on it): when Client's client has fewer, the test is skipped with a
// message that starts "pjrttest: needs" and names both counts, which run.sh of the GPU bundle
// reports as its own column, never as a pass.
func NeedDevices(t testing.TB, n int) *pjrt.Client {
	t.Helper()
	c := Client(t)
	if got := len(c.Devices()); got < n {
		t.Skipf("pjrttest: needs %d devices; the %s client has %d", n, c.Platform(), got)
	}
	return c
}

// ClientWithDevices is Client with n devices. On "cpu" (see Platform) clients are shared per
// device count and have exactly n CPU devices; on "gpu" all tests share one client with every GPU
// the plugin sees, and a test fails when there are fewer than n, as it does on "cpu" when n is
// over a $XLAMESH_TEST_DEVICES that is set. Clients stay open until the process exits.
func ClientWithDevices(t testing.TB, n int) *pjrt.Client {
	t.Helper()
	if most, err := Devices(); err != nil {
		t.Fatal(err)
	} else if _, set := os.LookupEnv(EnvDevices); set && n > most {
		t.Fatalf("pjrttest: the test needs %d devices; %s=%d stands in for a host with %d", n, EnvDevices, most, most)
	}
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

// FitShape returns the mesh shape want made to fit n devices, for tests that follow Client's
// device count: want itself when it has at most n devices, else want with its largest axis (the
// last of equal ones) divided by its smallest prime factor until it fits. (4, 2) stays (4, 2) on
// 8 devices or more and becomes (2, 2) on 4, (2, 1) on 2 or 3 and (1, 1) on 1, so an array
// dimension divisible by an axis of want stays divisible by the same axis of the result. It
// returns want's shape of ones for n < 1.
func FitShape(want []int, n int) []int {
	shape := slices.Clone(want)
	for MeshSize(shape) > max(n, 1) {
		big := 0
		for i, s := range shape {
			if s >= shape[big] {
				big = i
			}
		}
		p := 2
		for shape[big]%p != 0 {
			p++
		}
		shape[big] /= p
	}
	return shape
}

// MeshSize returns the number of devices of a mesh of the given shape: the product of its sizes.
func MeshSize(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}
