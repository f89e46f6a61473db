package pjrttest

import (
	"errors"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
)

// fakeTB records a Fatal instead of stopping the test.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatal(args ...any) {
	for _, a := range args {
		f.failed += a.(error).Error()
	}
	panic(f)
}

// TestMissingPluginFailsWithHint shows that without a reachable plugin an integration test fails
// (never skips) and says how to install the plugin.
func TestMissingPluginFailsWithHint(t *testing.T) {
	t.Setenv(pjrt.EnvPlugin, "/nonexistent/xla_cpu_pjrt.so")
	_, _, err := open(3) // a device count no other test opens, so nothing is cached
	if !errors.Is(err, pjrt.ErrPluginNotFound) {
		t.Fatalf("open with a missing plugin: got %v, want ErrPluginNotFound", err)
	}
	f := &fakeTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != f {
				t.Fatalf("Client did not fail the test: recovered %v", r)
			}
		}()
		ClientWithDevices(f, 3)
	}()
	for _, want := range []string{"make setup", "XLAMESH_PJRT_PLUGIN", "/nonexistent/xla_cpu_pjrt.so"} {
		if !strings.Contains(f.failed, want) {
			t.Errorf("failure message %q lacks %q", f.failed, want)
		}
	}
}

func TestPlatform(t *testing.T) {
	for _, tc := range []struct{ env, want, err string }{
		{"", "cpu", ""},
		{"cpu", "cpu", ""},
		{"gpu", "gpu", ""},
		{"tpu", "", `XLAMESH_TEST_PLATFORM="tpu": want cpu or gpu`},
	} {
		t.Setenv(EnvPlatform, tc.env)
		got, err := Platform()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s=%q: got error %v, want %q", EnvPlatform, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s=%q: got %q, %v; want %q", EnvPlatform, tc.env, got, err, tc.want)
		}
	}
}

// TestGPUPlatformRefusesCPUClient shows that XLAMESH_TEST_PLATFORM=gpu with a CPU plugin fails
// instead of running the GPU suite on CPU devices.
func TestGPUPlatformRefusesCPUClient(t *testing.T) {
	t.Setenv(EnvPlatform, "gpu")
	t.Setenv(pjrt.EnvPlugin, "") // the pinned CPU plugin
	c, err := Open(1)
	if err == nil {
		c.Close()
		t.Fatal("Open with XLAMESH_TEST_PLATFORM=gpu on the CPU plugin: no error")
	}
	for _, want := range []string{"XLAMESH_TEST_PLATFORM=gpu", "is cpu", "make test-gpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
