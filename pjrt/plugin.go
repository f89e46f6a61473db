package pjrt

// #include <stdlib.h>
// #include "xlamesh_pjrt.h"
import "C"

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/xlamesh/xlamesh/internal/regfile"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// MinAPIMinor is the oldest PJRT C API minor version xlamesh accepts (major 0): the API of the
// pinned xla-cpu-pjrt 0.0.1 plugin, the oldest one the tests run on. There is no upper bound: the
// binding is compiled against a newer header (cc/include), passes its larger argument structs,
// which plugins accept, and checks every function slot before calling it.
const MinAPIMinor = C.XM_MIN_API_MINOR

// InstallHint says how to get a plugin; it ends every ErrPluginNotFound message.
const InstallHint = "install the CPU plugin with `go run github.com/xlamesh/xlamesh/cmd/xlamesh@latest install-plugin` " +
	"(`make setup` in the repository), or set XLAMESH_PJRT_PLUGIN to the path of a PJRT plugin .so"

// EnvPlugin names the environment variable that overrides the default plugin (a path or a name).
const EnvPlugin = "XLAMESH_PJRT_PLUGIN"

// Plugin is a loaded PJRT plugin. Plugins are loaded once per path and never unloaded.
type Plugin struct {
	api    *api
	attrs  map[string]any
	lapack lapackState
}

// Path returns the absolute path of the plugin's shared library.
func (p *Plugin) Path() string { return p.api.path }

// APIVersion returns the PJRT C API version the plugin reports.
func (p *Plugin) APIVersion() (major, minor int) { return p.api.major, p.api.minor }

// APIStructSize returns the size of the plugin's PJRT_Api function table in bytes, which tells
// which functions it can have (1144 from API 0.112 on).
func (p *Plugin) APIStructSize() int { return p.api.structSize }

// Has reports whether the plugin implements the named PJRT C API function, e.g.
// "PJRT_Executable_Serialize". Only the functions the binding uses are known; others report false.
func (p *Plugin) Has(function string) bool {
	for _, f := range knownFunctions {
		if f.name == function {
			return p.api.has(f)
		}
	}
	return false
}

// Attributes returns the plugin's attributes (for XLA plugins: xla_version,
// stablehlo_current_version, stablehlo_minimum_version), as string, int64, []int64, float32 or bool.
func (p *Plugin) Attributes() map[string]any { return maps.Clone(p.attrs) }

// String returns e.g. "PJRT plugin /path/xla_cpu_pjrt.so (API 0.81)".
func (p *Plugin) String() string {
	return fmt.Sprintf("PJRT plugin %s (API %d.%d)", p.api.path, p.api.major, p.api.minor)
}

// loaded holds every plugin LoadPlugin has loaded, by absolute path.
var (
	loadedMu sync.Mutex
	loaded   = map[string]*Plugin{}
)

// LoadPlugin loads a plugin by path or by name. A value containing a path separator or ending in
// ".so" is a path; "cpu" is the pinned CPU plugin (FindCPUPlugin); any other name is looked up as
// pjrt_c_api_<name>_plugin.so, pjrt-plugin-<name>.so or pjrt_plugin_<name>.so in the directories of
// PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/gomlx/pjrt and /usr/local/lib/gomlx/pjrt.
//
// Nothing in a bad file can crash the process: the file is checked first (a regular, readable
// ELF shared object of this machine's class and architecture whose program headers and segments
// lie inside the file), then loaded, and only PJRT_Api's size, version and function slots are
// read before anything is called. A missing file gives ErrPluginNotFound; a file that is not a
// PJRT plugin (truncated, not ELF, no GetPjrtApi, a table smaller than API 0.81's) ErrNotPlugin;
// a major version other than 0 or a minor below MinAPIMinor ErrPluginVersion; a null or missing
// function the binding needs ErrUnimplemented, naming the function and the plugin's version.
func LoadPlugin(nameOrPath string) (*Plugin, error) {
	path, err := resolvePlugin(nameOrPath)
	if err != nil {
		return nil, err
	}
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if p, ok := loaded[path]; ok {
		return p, nil
	}
	if err := checkPluginFile(path); err != nil {
		return nil, err
	}
	quietXLA()
	a, err := probe(path)
	if err != nil {
		return nil, err
	}
	if a.major != 0 || a.minor < MinAPIMinor {
		return nil, fmt.Errorf("pjrt: plugin %s speaks PJRT C API %d.%d: %w: xlamesh needs 0.%d or newer",
			path, a.major, a.minor, ErrPluginVersion, MinAPIMinor)
	}
	for _, f := range required {
		if err := a.need(f); err != nil {
			return nil, err
		}
	}
	var init C.PJRT_Plugin_Initialize_Args
	if err := a.toError("initialize plugin "+path, ErrNotPlugin, C.xm_Plugin_Initialize(a.p, &init)); err != nil {
		return nil, err
	}
	p := &Plugin{api: a, attrs: map[string]any{}}
	if a.has(fnPluginAttributes) {
		var at C.PJRT_Plugin_Attributes_Args
		if err := a.toError("plugin attributes", ErrNotPlugin, C.xm_Plugin_Attributes(a.p, &at)); err != nil {
			return nil, err
		}
		p.attrs = namedValues(at.attributes, at.num_attributes)
	}
	loaded[path] = p
	return p, nil
}

// EnvXLALogLevel is the variable XLA's C++ logging reads (0 info, 1 warning, 2 error, 3 fatal).
// Unless it is set, LoadPlugin sets it to 1 before the first plugin loads, so XLA's info chatter
// stays off stderr; set it (e.g. to 0) to see everything.
const EnvXLALogLevel = "TF_CPP_MIN_LOG_LEVEL"

// quietXLA puts XLA's logging at warning level unless the user chose a level.
func quietXLA() {
	if _, ok := os.LookupEnv(EnvXLALogLevel); !ok {
		_ = os.Setenv(EnvXLALogLevel, "1")
	}
}

// probe loads the library at path with the C probe and reads its PJRT_Api table.
func probe(path string) (*api, error) {
	cPath := C.CString(path)
	defer C.free(unsafe.Pointer(cPath))
	var p *C.PJRT_Api
	var size C.size_t
	var major, minor, code C.int
	msg := C.xm_probe(cPath, &p, &size, &major, &minor, &code)
	if msg != nil {
		text := C.GoString(msg)
		C.free(unsafe.Pointer(msg))
		return nil, fmt.Errorf("pjrt: plugin %s: %w: %s", path, ErrNotPlugin, text)
	}
	return &api{p: p, structSize: int(size), major: int(major), minor: int(minor), path: path}, nil
}

// checkPluginFile checks, before dlopen sees the file, that it is a regular, readable ELF shared
// object for this machine whose headers and loadable segments lie inside the file: dlopen of a
// truncated library maps pages past the end of the file and dies with SIGBUS on first touch.
func checkPluginFile(path string) error {
	file, fileSize, err := regfile.Open(path, -1) // no FIFO or device: it would block or never end
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pjrt: plugin %s: %w; %s", path, ErrPluginNotFound, InstallHint)
		}
		if errors.Is(err, regfile.ErrNotRegular) {
			return fmt.Errorf("pjrt: plugin %s: %w: %w", path, ErrNotPlugin, err)
		}
		return fmt.Errorf("pjrt: plugin %s: %w: %v", path, ErrNotPlugin, err)
	}
	defer file.Close()
	f, err := elf.NewFile(file)
	if err != nil {
		return fmt.Errorf("pjrt: plugin %s: %w: not a readable ELF file: %v", path, ErrNotPlugin, err)
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		return fmt.Errorf("pjrt: plugin %s: %w: ELF type %v, want a shared object (ET_DYN)", path, ErrNotPlugin, f.Type)
	}
	if want := nativeMachine(); want != elf.EM_NONE && f.Machine != want {
		return fmt.Errorf("pjrt: plugin %s: %w: built for %v, this machine is %v", path, ErrNotPlugin, f.Machine, want)
	}
	size := uint64(fileSize)
	for i, prog := range f.Progs {
		if prog.Off > size || prog.Filesz > size-prog.Off {
			return fmt.Errorf("pjrt: plugin %s: %w: truncated: segment %d (%v) needs bytes %d..%d, the file has %d",
				path, ErrNotPlugin, i, prog.Type, prog.Off, prog.Off+prog.Filesz, size)
		}
	}
	// GetPjrtApi must be a function: a data symbol of that name would be called and crash.
	syms, err := f.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("pjrt: plugin %s: %w: no dynamic symbol table: %v", path, ErrNotPlugin, err)
	}
	found := false
	for _, sym := range syms {
		if sym.Name == "GetPjrtApi" && sym.Section != elf.SHN_UNDEF {
			if t := elf.ST_TYPE(sym.Info); t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
				return fmt.Errorf("pjrt: plugin %s: %w: GetPjrtApi is a %v symbol, not a function", path, ErrNotPlugin, t)
			}
			found = true
		}
	}
	if !found {
		return fmt.Errorf("pjrt: plugin %s: %w: no GetPjrtApi symbol: not a PJRT plugin", path, ErrNotPlugin)
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && (s.Offset > size || s.FileSize > size-s.Offset) {
			return fmt.Errorf("pjrt: plugin %s: %w: truncated: section %s needs bytes %d..%d, the file has %d",
				path, ErrNotPlugin, s.Name, s.Offset, s.Offset+s.FileSize, size)
		}
	}
	return nil
}

// nativeMachine is the ELF machine of the running program (EM_NONE: unknown, not checked).
func nativeMachine() elf.Machine {
	switch runtime.GOARCH {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	case "ppc64le":
		return elf.EM_PPC64
	case "s390x":
		return elf.EM_S390
	case "riscv64":
		return elf.EM_RISCV
	}
	return elf.EM_NONE
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

// FindCPUPlugin returns the path of the pinned CPU plugin: $XLAMESH_PJRT_PLUGIN if it is a path,
// else where `xlamesh install-plugin` puts it (plugins.Dir: $XLAMESH_CACHE_DIR, or the user cache
// directory + /xlamesh), else, when XLAMESH_CACHE_DIR is unset and the process runs inside an
// xlamesh checkout, where the checkout's `make setup` puts it (plugins.CheckoutCache: its .cache).
// The error matches ErrPluginNotFound, lists the paths looked at and gives the command that
// installs the plugin.
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
	cpu, err := plugins.Lookup("cpu")
	if err != nil {
		return "", err
	}
	dir, dirErr := plugins.Dir()
	var tried []string
	if dirErr == nil {
		path := cpu.Path(dir)
		if fileExists(path) {
			return path, nil
		}
		tried = append(tried, path)
	}
	if os.Getenv(plugins.EnvCacheDir) == "" {
		if cache := plugins.CheckoutCache(); cache != "" {
			path := cpu.Path(cache)
			if fileExists(path) {
				return path, nil
			}
			tried = append(tried, path)
		}
	}
	if len(tried) == 0 {
		return "", fmt.Errorf("pjrt: CPU plugin: %w: %v; %s", ErrPluginNotFound, dirErr, InstallHint)
	}
	return "", fmt.Errorf("pjrt: CPU plugin: %w (looked for %s); %s", ErrPluginNotFound, strings.Join(tried, ", "), InstallHint)
}

// fileExists reports whether path names a regular file (after following symlinks).
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
