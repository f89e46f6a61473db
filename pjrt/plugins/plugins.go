package plugins

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/xlamesh/xlamesh/internal/regfile"
)

// EnvCacheDir names the environment variable that moves the cache: Dir returns its value when it
// is set, and pjrt.FindCPUPlugin then does not look in the checkout's cache (CheckoutCache).
const EnvCacheDir = "XLAMESH_CACHE_DIR"

// Plugin is a PJRT plugin shipped in a PyPI wheel.
type Plugin struct {
	Name    string // short name: "cpu", "cpu-0.81", "cuda12", "cuda13", "tpu"
	Package string // PyPI project, e.g. "xla-cpu-pjrt"
	Version string // PyPI version, e.g. "0.0.1"
	SHA256  string // the wheel's sha256 for this machine's platform; "" trusts the index's
	SOPath  string // the plugin's path inside the wheel
	API     string // the PJRT C API version it reports, for the record (e.g. "0.81")
	// SOSize and SOSHA256 pin the plugin file itself (0 and "": not pinned; the stamp written
	// at install time records them then). install.Install and install.Verify check the
	// installed file against them, so a truncated or altered plugin is found even where the
	// stamp is intact.
	SOSize   int64
	SOSHA256 string
}

// Known are the plugins xlamesh is tested with, pinned (x86-64 Linux wheels). "cpu" is the one
// pjrt.Open uses by default: JAX 0.11.2's CPU plugin (PJRT API 0.115), which runs everything
// the older "cpu-0.81" runs of what JAX 0.12 exports, and more (results in pinned host memory;
// docs/plugins.md). Until November 2026 "cpu" was xla-cpu-pjrt 0.0.1 and the other one
// "cpu-0.115", a name Lookup still accepts.
var Known = []Plugin{
	{"cpu", "lammps-jax-pjrt-cpu", "0.11.2", "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1",
		"lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so", "0.115",
		201600336, "ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2"},
	{"cpu-0.81", "xla-cpu-pjrt", "0.0.1", "55837b6b7b47daa717f2d9a5a03563ea0ceaa338d06a81a1e2d3f060d960decc",
		"xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so", "0.81",
		259284552, "88c3f28c5900f48ad4a82cab9e79bba9537809743395e341485f8794268820dc"},
	{"cuda12", "jax-cuda12-pjrt", "0.12.0.1", "5ec28e06198d094031c37590b4ea753ae8cde4879ab4b60baf40f0dffb673286",
		"jax_plugins/xla_cuda12/xla_cuda_plugin.so", "0.116",
		486596368, "921aaa9c635255fb7b7a660d11c8f702c78a70e7f7d005d4f377c2dc5f0fede2"},
	{"cuda13", "jax-cuda13-pjrt", "0.12.0.1", "5899bb6177eda86ea532afb9a26794f2bdd04966f6a01f9028266b16c2b6cf90",
		"jax_plugins/xla_cuda13/xla_cuda_plugin.so", "0.116", 0, ""},
	{"tpu", "libtpu", "0.0.52", "f5e2e596eaea9357fbb5a6755a7a9007c6ab75bfde4a55191b03eff402971140",
		"libtpu/libtpu.so", "0.117", 0, ""},
}

// LAPACK is the LAPACK library over which package pjrt serves the lapack_*_ffi kernels of
// jnp.linalg programs on CPU plugins (pjrt.Plugin.LAPACK): OpenBLAS with LAPACK as SciPy ships
// it in the scipy-openblas32 wheel (32-bit integers, symbols prefixed scipy_). It is not a PJRT
// plugin (API is ""), but it installs like one: `xlamesh install-plugin -plugin lapack`, and
// Lookup("lapack") returns it.
var LAPACK = Plugin{"lapack", "scipy-openblas32", "0.3.34.481.3", "0595f94cd58c1f8a0d90c975621f4587337a003916b1979e834ebdf2cb5d9504",
	"scipy_openblas32/lib/libscipy_openblas.so", "",
	25127992, "b396d74f12ab4319e6713b3287104d64245c76c60e5bd9eaeb4b447eda66a561"}

// renamed are former short names of Known plugins.
var renamed = map[string]string{"cpu-0.115": "cpu"}

// Lookup returns the known plugin with the given short name (or a former name of it), or
// LAPACK for "lapack". Any other name gives an error wrapping ErrUnknownPlugin that lists the
// known names.
func Lookup(name string) (Plugin, error) {
	if n, ok := renamed[name]; ok {
		name = n
	}
	if name == LAPACK.Name {
		return LAPACK, nil
	}
	var names []string
	for _, p := range Known {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	names = append(names, LAPACK.Name)
	return Plugin{}, fmt.Errorf("plugins: %w %q (known: %s)", ErrUnknownPlugin, name, strings.Join(names, ", "))
}

// ErrUnknownPlugin: Lookup was given a name that is not one of Known's (nor a former one).
var ErrUnknownPlugin = errors.New("unknown plugin")

// Dir returns the cache directory: $XLAMESH_CACHE_DIR, or os.UserCacheDir()/xlamesh.
func Dir() (string, error) {
	if d := os.Getenv(EnvCacheDir); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("plugins: no cache directory (set %s): %w", EnvCacheDir, err)
	}
	return filepath.Join(d, "xlamesh"), nil
}

// CheckoutCache returns the .cache directory of the xlamesh checkout the process runs in, where
// the repository's `make setup` installs the plugins: the nearest directory at or above the
// working directory whose go.mod declares module github.com/xlamesh/xlamesh, when it holds a
// .cache directory; "" otherwise. pjrt.Open looks there after Dir, when XLAMESH_CACHE_DIR is
// unset, so that `go test ./...` in a checkout finds what `make setup` installed.
func CheckoutCache() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if isXlameshModule(filepath.Join(dir, "go.mod")) {
			cache := filepath.Join(dir, ".cache")
			if st, err := os.Stat(cache); err == nil && st.IsDir() {
				return cache
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// isXlameshModule reports whether the go.mod file at path declares xlamesh's module.
func isXlameshModule(path string) bool {
	data, err := regfile.ReadFile(path, 1<<20)
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`+"`") == "github.com/xlamesh/xlamesh"
		}
	}
	return false
}

// Path returns where p is (or would be) installed under dir.
func (p Plugin) Path(dir string) string {
	return filepath.Join(dir, "plugins", p.Package+"-"+p.Version, path.Base(p.SOPath))
}
