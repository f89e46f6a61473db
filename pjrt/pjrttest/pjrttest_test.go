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

// withoutSharedClients makes the test run as the first test of a binary does, with no shared
// client open (on "gpu" every test shares one, whatever device count it asks for), and puts the
// shared clients back when it ends.
func withoutSharedClients(t *testing.T) {
	mu.Lock()
	saved := clients
	clients = map[int]*pjrt.Client{}
	mu.Unlock()
	t.Cleanup(func() {
		mu.Lock()
		clients = saved
		mu.Unlock()
	})
}

// TestMissingPluginFailsWithHint shows that without a reachable plugin an integration test fails
// (never skips) and says how to install the plugin.
func TestMissingPluginFailsWithHint(t *testing.T) {
	t.Setenv(pjrt.EnvPlugin, "/nonexistent/xla_cpu_pjrt.so")
	// One device, which every host has, whatever host the run stands in for, and no shared
	// client to hand out instead of opening the missing plugin.
	t.Setenv(EnvDevices, "")
	withoutSharedClients(t)
	_, _, err := open(1)
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
		ClientWithDevices(f, 1)
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

// TestOptions: Options opens a client of the test platform, with exactly the n CPU devices asked
// for on "cpu" and with no create option, so every GPU, on "gpu"; another platform is an error.
func TestOptions(t *testing.T) {
	platform, err := Platform()
	if err != nil {
		t.Fatal(err)
	}
	opts, err := Options(3)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pjrt.Open(append(opts, pjrt.WithMaxInFlight(2))...)
	if err != nil {
		t.Fatalf("open with Options(3) on %s: %v", platform, err)
	}
	defer c.Close()
	shared := Client(t)
	switch {
	case platform == "cpu" && (c.Platform() != "cpu" || len(c.Devices()) != 3):
		t.Errorf("Options(3) on cpu: a %s client with %d devices, want cpu with 3", c.Platform(), len(c.Devices()))
	case platform == "gpu" && (c.Platform() != shared.Platform() || len(c.Devices()) != len(shared.Devices())):
		t.Errorf("Options(3) on gpu: a %s client with %d devices, want %s with %d like Client's",
			c.Platform(), len(c.Devices()), shared.Platform(), len(shared.Devices()))
	}
	for _, tc := range []struct {
		platform string
		n        int
		err      string
	}{{"cpu", 1, ""}, {"", 1, ""}, {"gpu", 0, ""}, {"tpu", 0, `XLAMESH_TEST_PLATFORM="tpu": want cpu or gpu`}} {
		t.Setenv(EnvPlatform, tc.platform)
		opts, err := Options(3)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s=%q: got error %v, want %q", EnvPlatform, tc.platform, err, tc.err)
		case tc.err == "" && (err != nil || len(opts) != tc.n):
			t.Errorf("%s=%q: got %d options, %v; want %d", EnvPlatform, tc.platform, len(opts), err, tc.n)
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

// TestNeedDevices shows that, on any platform and device count, a test needing as many devices
// as Client's client has runs on it, and one needing one more is skipped with the message run.sh
// counts.
func TestNeedDevices(t *testing.T) {
	c := Client(t)
	n := len(c.Devices())
	if got := NeedDevices(t, n); got != c {
		t.Fatalf("NeedDevices(%d) on a %d-device host: not Client's client", n, n)
	}
	s := &skipTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != s {
				t.Fatalf("NeedDevices(%d) on a %d-device host did not skip: recovered %v", n+1, n, r)
			}
		}()
		NeedDevices(s, n+1)
	}()
	if want := fmt.Sprintf("pjrttest: needs %d devices; the %s client has %d", n+1, c.Platform(), n); s.skipped != want {
		t.Errorf("skip message %q, want %q", s.skipped, want)
	}
}

// TestNeedDevicesStandInCPUOnly shows that a test needing more devices than the host that
// XLAMESH_TEST_DEVICES stands in for has is skipped with the message run.sh counts, and one
// needing no more runs on Client's client. On "gpu" the plugin decides the device count and the
// variable must be unset.
func TestNeedDevicesStandInCPUOnly(t *testing.T) {
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
