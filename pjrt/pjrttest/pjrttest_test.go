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
