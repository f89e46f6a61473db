package pjrt_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// buildFake compiles testdata/fakeplugin/fake.c with -DFAKE_<kind> into a shared library.
func buildFake(t *testing.T, kind string) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	out := filepath.Join(t.TempDir(), "fake_"+kind+".so")
	cmd := exec.Command(cc, "-shared", "-fPIC", "-std=c11", "-I", filepath.Join("..", "cc", "include"),
		"-DFAKE_"+kind, "-o", out, filepath.Join("testdata", "fakeplugin", "fake.c"))
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "building the fake plugin needs a C compiler (cgo does too): %s", msg)
	return out
}

// TestFakePlugins loads libraries that pass for PJRT plugins until something in their
// PJRT_Api table gives them away; each is a typed error, none a crash.
func TestFakePlugins(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want error
		text string
	}{
		{"TINY", pjrt.ErrNotPlugin, "struct_size 64 is smaller than 984"},
		{"NULL_FUNCTIONS", pjrt.ErrUnimplemented, "(PJRT C API 0.114) does not implement PJRT_Error_Destroy"},
		{"MAJOR", pjrt.ErrPluginVersion, "speaks PJRT C API 1.0"},
		{"OLD", pjrt.ErrPluginVersion, "speaks PJRT C API 0.54"},
		{"NULL_API", pjrt.ErrNotPlugin, "GetPjrtApi returned NULL"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			path := buildFake(t, tc.kind)
			_, err := pjrt.LoadPlugin(path)
			require.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.text)
			assert.ErrorContains(t, err, path)
			_, err = pjrt.Open(pjrt.WithPlugin(path))
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

// TestTruncatedPlugin loads the first part of the real plugin: dlopen would map pages past the
// end of the file and die with SIGBUS; the ELF check refuses it first.
func TestTruncatedPlugin(t *testing.T) {
	real := pjrttest.Client(t).Plugin().Path()
	for _, size := range []int64{16, 4096, 1 << 20} {
		src, err := os.Open(real)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "truncated.so")
		dst, err := os.Create(path)
		require.NoError(t, err)
		_, err = io.CopyN(dst, src, size)
		require.NoError(t, err)
		require.NoError(t, dst.Close())
		require.NoError(t, src.Close())
		_, err = pjrt.LoadPlugin(path)
		require.ErrorIs(t, err, pjrt.ErrNotPlugin, "a %d-byte prefix", size)
		assert.ErrorContains(t, err, path)
	}
	// Not a regular file, not ELF, an executable rather than a shared object.
	_, err := pjrt.LoadPlugin(t.TempDir() + "/")
	assert.True(t, errors.Is(err, pjrt.ErrNotPlugin) || errors.Is(err, pjrt.ErrPluginNotFound), "%v", err)
	exe, err := os.Executable()
	require.NoError(t, err)
	_, err = pjrt.LoadPlugin(exe)
	if runtime.GOOS == "linux" {
		// Go test binaries are position-independent executables on some systems (ET_DYN) and
		// plain executables on others; either way they have no GetPjrtApi.
		assert.ErrorIs(t, err, pjrt.ErrNotPlugin)
	}
}
