package pjrt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	gopjrt "github.com/gomlx/gopjrt/pjrt"
)

// The pinned CPU plugin (tools/setup/plugin.lock): where tools/setup/install-plugin.sh puts it,
// relative to the cache directory.
const (
	cpuPluginDir  = "plugins/xla-cpu-pjrt-0.0.1"
	cpuPluginFile = "xla_cpu_pjrt.so"
)

// The PJRT C API versions gopjrt v0.10.0 can drive. It is built against 0.81; the structs on its
// compile and execute path are unchanged through 0.89, and from 0.97 the plugin rejects its
// PJRT_ExecuteOptions (see docs/plugins.md).
const (
	MinAPIMinor = 81
	MaxAPIMinor = 89
)

// InstallHint says how to get a plugin; it ends every ErrPluginNotFound message.
const InstallHint = "install the pinned CPU plugin with `make setup` (or `bash tools/setup/install-plugin.sh`) " +
	"in the xlamesh repository, or set XLAMESH_PJRT_PLUGIN to the absolute path of a PJRT plugin .so"

// EnvPlugin names the environment variable that overrides the default plugin (a path or a name).
const EnvPlugin = "XLAMESH_PJRT_PLUGIN"

// EnvCacheDir names the environment variable holding the cache directory the installer writes to.
const EnvCacheDir = "XLAMESH_CACHE_DIR"

// Plugin is a loaded PJRT plugin. Plugins are loaded once per path and never unloaded.
type Plugin struct {
	path         string
	major, minor int
	g            *gopjrt.Plugin
}

// Path returns the absolute path of the plugin's shared library.
func (p *Plugin) Path() string { return p.path }

// APIVersion returns the PJRT C API version the plugin reports.
func (p *Plugin) APIVersion() (major, minor int) { return p.major, p.minor }

// Attributes returns the plugin's attributes (for XLA plugins: xla_version,
// stablehlo_current_version, stablehlo_minimum_version).
func (p *Plugin) Attributes() map[string]any {
	out := make(map[string]any)
	for k, v := range p.g.Attributes() {
		out[k] = v
	}
	return out
}

// String returns e.g. "PJRT plugin /path/xla_cpu_pjrt.so (API 0.81)".
func (p *Plugin) String() string {
	return fmt.Sprintf("PJRT plugin %s (API %d.%d)", p.path, p.major, p.minor)
}

var (
	pluginsMu sync.Mutex
	plugins   = map[string]*Plugin{}
)

// LoadPlugin loads a plugin by path or by name. A value containing a path separator or ending in
// ".so" is a path; "cpu" is the pinned CPU plugin (FindCPUPlugin); any other name is looked up as
// pjrt_c_api_<name>_plugin.so, pjrt-plugin-<name>.so or pjrt_plugin_<name>.so in the directories of
// PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/gomlx/pjrt and /usr/local/lib/gomlx/pjrt.
//
// The file is first probed by xlamesh's own C code, which only reads its PJRT API version: a
// missing file, a file that is not a shared library, or a library without GetPjrtApi gives an
// error matching ErrPluginNotFound or ErrNotPlugin, and a plugin outside [MinAPIMinor, MaxAPIMinor]
// gives ErrPluginVersion; none of them can crash the process.
func LoadPlugin(nameOrPath string) (*Plugin, error) { return loadPlugin(nameOrPath, true) }

// loadPlugin is LoadPlugin; checkVersion=false skips the API window (WithAnyAPIVersion).
func loadPlugin(nameOrPath string, checkVersion bool) (*Plugin, error) {
	path, err := resolvePlugin(nameOrPath)
	if err != nil {
		return nil, err
	}
	pluginsMu.Lock()
	defer pluginsMu.Unlock()
	if p, ok := plugins[path]; ok {
		return p, nil
	}
	if !fileExists(path) {
		return nil, fmt.Errorf("pjrt: plugin %s: %w; %s", path, ErrPluginNotFound, InstallHint)
	}
	major, minor, err := probe(path)
	if err != nil {
		return nil, err
	}
	if checkVersion && (major != 0 || minor < MinAPIMinor || minor > MaxAPIMinor) {
		return nil, fmt.Errorf("pjrt: plugin %s speaks PJRT C API %d.%d: %w: gopjrt v0.10.0 works with 0.%d to 0.%d; "+
			"use the pinned xla-cpu-pjrt==0.0.1 (API 0.81, `make setup`) or a plugin built from XLA of 2025-11 to 2026-01, "+
			"or open it with pjrt.WithAnyAPIVersion() at your own risk (see docs/plugins.md)",
			path, major, minor, ErrPluginVersion, MinAPIMinor, MaxAPIMinor)
	}
	g, err := gopjrt.GetPlugin(path)
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, wrapGopjrt("load plugin", ErrNotPlugin, err))
	}
	p := &Plugin{path: path, major: major, minor: minor, g: g}
	plugins[path] = p
	return p, nil
}

// resolvePlugin turns a name or path into an absolute path.
func resolvePlugin(nameOrPath string) (string, error) {
	switch {
	case nameOrPath == "":
		return "", fmt.Errorf("pjrt: empty plugin name: %w; %s", ErrPluginNotFound, InstallHint)
	case nameOrPath == "cpu":
		return FindCPUPlugin()
	case strings.ContainsRune(nameOrPath, os.PathSeparator) || strings.HasSuffix(nameOrPath, ".so"):
		return filepath.Abs(nameOrPath)
	}
	var tried []string
	for _, dir := range pluginSearchDirs() {
		for _, pattern := range []string{"pjrt_c_api_%s_plugin.so", "pjrt-plugin-%s.so", "pjrt_plugin_%s.so"} {
			candidate := filepath.Join(dir, fmt.Sprintf(pattern, nameOrPath))
			if fileExists(candidate) {
				return candidate, nil
			}
			tried = append(tried, candidate)
		}
	}
	return "", fmt.Errorf("pjrt: plugin %q: %w (looked for %s); %s", nameOrPath, ErrPluginNotFound,
		strings.Join(tried, ", "), InstallHint)
}

func pluginSearchDirs() []string {
	if v, ok := os.LookupEnv("PJRT_PLUGIN_LIBRARY_PATH"); ok {
		return filepath.SplitList(v)
	}
	var dirs []string
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local/lib/gomlx/pjrt"))
	}
	return append(dirs, "/usr/local/lib/gomlx/pjrt")
}

// FindCPUPlugin returns the path of the pinned CPU plugin installed by `make setup`. It looks, in
// order, at $XLAMESH_PJRT_PLUGIN (if it is a path), $XLAMESH_CACHE_DIR, the .cache directory of
// the xlamesh checkout containing the working directory, and the user cache directory
// (~/.cache/xlamesh). The error matches ErrPluginNotFound and says how to install it.
func FindCPUPlugin() (string, error) {
	if v := os.Getenv(EnvPlugin); v != "" && v != "cpu" {
		abs, err := filepath.Abs(v)
		if err != nil {
			return "", fmt.Errorf("pjrt: %s=%q: %w", EnvPlugin, v, err)
		}
		if !fileExists(abs) {
			return "", fmt.Errorf("pjrt: %s=%q: %w; %s", EnvPlugin, v, ErrPluginNotFound, InstallHint)
		}
		return abs, nil
	}
	var tried []string
	for _, dir := range cacheDirs() {
		candidate := filepath.Join(dir, cpuPluginDir, cpuPluginFile)
		if fileExists(candidate) {
			return candidate, nil
		}
		tried = append(tried, candidate)
	}
	return "", fmt.Errorf("pjrt: CPU plugin: %w (looked for %s); %s", ErrPluginNotFound, strings.Join(tried, ", "), InstallHint)
}

// cacheDirs lists where the installer may have put its cache, most specific first.
func cacheDirs() []string {
	var dirs []string
	if v := os.Getenv(EnvCacheDir); v != "" {
		dirs = append(dirs, v)
	}
	if root, ok := projectRoot(); ok {
		dirs = append(dirs, filepath.Join(root, ".cache"))
	}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "xlamesh"))
	}
	return dirs
}

// projectRoot finds the xlamesh checkout containing the working directory (tests run in their
// package directory) by its go.mod.
func projectRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/xlamesh/xlamesh\n") {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// fileExists reports whether path names a regular file (after following symlinks).
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
