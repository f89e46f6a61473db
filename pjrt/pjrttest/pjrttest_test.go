package pjrttest

import (
	"errors"
	"fmt"
	"slices"
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
	// 3 devices, whatever host the run stands in for: a count no other test opens, so nothing
	// is cached.
	t.Setenv(EnvDevices, "")
	_, _, err := open(3)
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

func TestDevices(t *testing.T) {
	for _, tc := range []struct{ platform, env, set string }{
		{"cpu", "", ""}, {"cpu", "1", ""}, {"cpu", "2", ""}, {"cpu", "0", ""}, {"cpu", "x", ""},
		{"cpu", "100000", ""}, {"gpu", "", ""}, {"gpu", "2", "y"},
	} {
		t.Setenv(EnvPlatform, tc.platform)
		t.Setenv(EnvDevices, tc.env)
		got, err := Devices()
		var want int
		var wantErr string
		switch {
		case tc.env == "":
			want = pjrt.DefaultCPUDeviceCount
		case tc.platform == "gpu":
			wantErr = "XLAMESH_TEST_DEVICES=2 with XLAMESH_TEST_PLATFORM=gpu"
		case tc.env == "1" || tc.env == "2":
			want = int(tc.env[0] - '0')
		default:
			wantErr = `XLAMESH_TEST_DEVICES="` + tc.env + `": want a device count from 1 to`
		}
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s, %s=%q: got %d, %v; want error %q", tc.platform, EnvDevices, tc.env, got, err, wantErr)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s, %s=%q: got %d, %v; want %d", tc.platform, EnvDevices, tc.env, got, err, want)
		}
	}
}

// skipTB records a Skipf instead of skipping the test.
type skipTB struct {
	testing.TB
	skipped string
}

func (s *skipTB) Helper() {}
func (s *skipTB) Skipf(format string, args ...any) {
	s.skipped = fmt.Sprintf(format, args...)
	panic(s)
}

// TestNeedDevices shows that a test needing more devices than the stand-in host has is skipped
// with the message run.sh counts, and one needing no more runs on Client's client.
func TestNeedDevices(t *testing.T) {
	t.Setenv(EnvDevices, "2")
	if c := NeedDevices(t, 2); len(c.Devices()) != 2 {
		t.Fatalf("NeedDevices(2) with %s=2: %d devices", EnvDevices, len(c.Devices()))
	}
	s := &skipTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != s {
				t.Fatalf("NeedDevices(8) with %s=2 did not skip: recovered %v", EnvDevices, r)
			}
		}()
		NeedDevices(s, 8)
	}()
	if want := "pjrttest: needs 8 devices; the cpu client has 2"; s.skipped != want {
		t.Errorf("skip message %q, want %q", s.skipped, want)
	}
}

// TestFitShape pins the meshes the tests run on per device count.
func TestFitShape(t *testing.T) {
	for _, tc := range []struct {
		n         int
		want, got []int
	}{
		{8, []int{4, 2}, []int{4, 2}}, {16, []int{4, 2}, []int{4, 2}}, {4, []int{4, 2}, []int{2, 2}},
		{3, []int{4, 2}, []int{2, 1}}, {2, []int{4, 2}, []int{2, 1}}, {1, []int{4, 2}, []int{1, 1}},
		{8, []int{2, 4}, []int{2, 4}}, {4, []int{2, 4}, []int{2, 2}}, {2, []int{2, 4}, []int{2, 1}},
		{4, []int{8}, []int{4}}, {1, []int{8}, []int{1}}, {2, []int{2, 2, 2}, []int{2, 1, 1}},
		{4, []int{6, 2}, []int{1, 2}}, {0, []int{4, 2}, []int{1, 1}},
	} {
		if got := FitShape(tc.want, tc.n); !slices.Equal(got, tc.got) {
			t.Errorf("FitShape(%v, %d) = %v, want %v", tc.want, tc.n, got, tc.got)
		}
	}
	if got := MeshSize([]int{2, 4}); got != 8 {
		t.Errorf("MeshSize(2, 4) = %d", got)
	}
}
