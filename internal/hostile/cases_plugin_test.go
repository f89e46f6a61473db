package hostile

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/xlamesh/xlamesh/internal/regfile"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/install"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// fakeKinds are the variants of testdata/fake.c.
var fakeKinds = []string{"TINY", "ZERO_SIZE", "NULL_FUNCTIONS", "HUGE_SIZE", "MAJOR", "OLD", "NULL_API", "DATA_SYMBOL", "NO_SYMBOL"}

// buildFakes compiles testdata/fake.c once per kind into a directory the children read.
func buildFakes(t *testing.T) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	dir := t.TempDir()
	for _, kind := range fakeKinds {
		out := filepath.Join(dir, "fake_"+kind+".so")
		cmd := exec.Command(cc, "-shared", "-fPIC", "-std=c11", "-I", filepath.Join("..", "..", "cc", "include"),
			"-DFAKE_"+kind, "-o", out, filepath.Join("testdata", "fake.c"))
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the fake plugin %s needs a C compiler (cgo does too): %v\n%s", kind, err, msg)
		}
	}
	return dir
}

// realPlugin returns the path of the child's CPU plugin.
func realPlugin(h *H) string { return h.Client().Plugin().Path() }

// copyPrefix writes the first n bytes of src (all of it for n < 0) to a new file, then lets
// patch change it, and returns the file's path.
func copyPrefix(h *H, src string, n int64, patch func([]byte)) string {
	data, err := os.ReadFile(src)
	h.Must(err)
	if n >= 0 {
		data = data[:n]
	}
	if patch != nil {
		patch(data)
	}
	path := filepath.Join(h.Dir(), "plugin.so")
	h.Must(os.WriteFile(path, data, 0o755))
	return path
}

// loadCase loads the plugin file path returns with LoadPlugin, and opens it with Open, which
// must fail the same way.
func loadCase(name string, path func(h *H) string, want ...any) *hcase {
	ws := is(want...)
	return &hcase{
		name: "pjrt.LoadPlugin: " + name, class: classPlugins, entry: "pjrt.LoadPlugin", group: "plugin",
		want: ws,
		run: func(h *H) error {
			p := path(h)
			_, err := pjrt.LoadPlugin(p)
			c, oerr := pjrt.Open(pjrt.WithPlugin(p))
			if oerr == nil {
				c.Close()
			}
			for _, w := range ws {
				if !errors.Is(oerr, w.err) {
					h.Failf("Open(WithPlugin(%q)): %v, want %s", p, oerr, w.name)
				}
			}
			return err
		},
	}
}

func pluginCases() []*hcase {
	notPlugin := []any{"pjrt.ErrNotPlugin", pjrt.ErrNotPlugin}
	fake := func(kind string, want ...any) *hcase {
		return loadCase("fake plugin "+kind, func(h *H) string { return h.Fake(kind) }, want...)
	}
	prefix := func(n int64) func(h *H) string {
		return func(h *H) string { return copyPrefix(h, realPlugin(h), n, nil) }
	}
	elf := func(patch func([]byte)) func(h *H) string {
		return func(h *H) string { return copyPrefix(h, realPlugin(h), -1, patch) }
	}
	return []*hcase{
		loadCase("the real plugin's first 16 bytes", prefix(16), notPlugin...),
		loadCase("a FIFO", func(h *H) string {
			path := filepath.Join(h.Dir(), "fifo.so")
			h.Must(syscall.Mkfifo(path, 0o644))
			return path
		}, append(notPlugin, "regfile.ErrNotRegular", regfile.ErrNotRegular)...),
		loadCase("/dev/zero", func(*H) string { return "/dev/zero" }, append(notPlugin, "regfile.ErrNotRegular", regfile.ErrNotRegular)...),
		loadCase("the real plugin's first 4 KiB", prefix(4096), notPlugin...),
		loadCase("the real plugin's first 1 MiB", prefix(1<<20), notPlugin...),
		loadCase("the real plugin's first half", func(h *H) string {
			st, err := os.Stat(realPlugin(h))
			h.Must(err)
			return copyPrefix(h, realPlugin(h), st.Size()/2, nil)
		}, notPlugin...),
		loadCase("the real plugin as a 32-bit ELF", elf(func(b []byte) { b[4] = 1 }), notPlugin...),
		loadCase("the real plugin for another machine (e_machine AArch64/x86-64 swapped)", elf(func(b []byte) {
			m := binary.LittleEndian.Uint16(b[18:])
			binary.LittleEndian.PutUint16(b[18:], map[uint16]uint16{62: 183, 183: 62}[m])
		}), notPlugin...),
		loadCase("the real plugin with program headers past the end", elf(func(b []byte) {
			binary.LittleEndian.PutUint64(b[32:], uint64(len(b))+4096)
		}), notPlugin...),
		loadCase("the real plugin with 65535 program headers", elf(func(b []byte) {
			binary.LittleEndian.PutUint16(b[56:], 0xffff)
		}), notPlugin...),
		loadCase("an empty file", func(h *H) string { return copyPrefix(h, realPlugin(h), 0, nil) }, notPlugin...),
		loadCase("a text file named .so", func(h *H) string {
			path := filepath.Join(h.Dir(), "readme.so")
			h.Must(os.WriteFile(path, []byte("not a plugin\n"), 0o644))
			return path
		}, notPlugin...),
		loadCase("a directory named .so", func(h *H) string {
			path := filepath.Join(h.Dir(), "dir.so")
			h.Must(os.Mkdir(path, 0o755))
			return path
		}, notPlugin...),
		loadCase("the test executable", func(h *H) string { exe, err := os.Executable(); h.Must(err); return exe }, notPlugin...),
		loadCase("a path that does not exist", func(h *H) string { return filepath.Join(h.Dir(), "missing.so") },
			"pjrt.ErrPluginNotFound", pjrt.ErrPluginNotFound),
		loadCase("a path with a NUL byte in it", func(h *H) string { return realPlugin(h) + "\x00/../x.so" },
			"pjrt.ErrPluginNotFound", pjrt.ErrPluginNotFound),
		loadCase("a name no plugin has", func(*H) string { return "no-such-plugin-hostile" }, "pjrt.ErrPluginNotFound", pjrt.ErrPluginNotFound),
		fake("TINY", notPlugin...),
		fake("ZERO_SIZE", notPlugin...),
		fake("NULL_FUNCTIONS", "pjrt.ErrUnimplemented", pjrt.ErrUnimplemented),
		fake("HUGE_SIZE", "pjrt.ErrUnimplemented", pjrt.ErrUnimplemented),
		fake("MAJOR", "pjrt.ErrPluginVersion", pjrt.ErrPluginVersion),
		fake("OLD", "pjrt.ErrPluginVersion", pjrt.ErrPluginVersion),
		fake("NULL_API", notPlugin...),
		fake("DATA_SYMBOL", notPlugin...),
		fake("NO_SYMBOL", notPlugin...),
		{
			name: "pjrt.Open: $XLAMESH_PJRT_PLUGIN naming a truncated plugin", class: classPlugins, entry: "pjrt.Open", group: "plugin",
			want: is("pjrt.ErrNotPlugin", pjrt.ErrNotPlugin),
			run: func(h *H) error {
				path := copyPrefix(h, realPlugin(h), 4096, nil)
				old, had := os.LookupEnv(pjrt.EnvPlugin)
				os.Setenv(pjrt.EnvPlugin, path)
				defer func() {
					if had {
						os.Setenv(pjrt.EnvPlugin, old)
					} else {
						os.Unsetenv(pjrt.EnvPlugin)
					}
				}()
				c, err := pjrt.Open()
				if err == nil {
					c.Close()
				}
				return err
			},
		},
		{
			name: "pjrt.LoadPlugin: the real plugin twice, then two clients", class: classPlugins, entry: "pjrt.LoadPlugin", group: "plugin",
			run: func(h *H) error {
				path := realPlugin(h)
				for range 2 {
					if _, err := pjrt.LoadPlugin(path); err != nil {
						return err
					}
				}
				c1, err := pjrt.Open(pjrt.WithPlugin(path), pjrt.WithCPUDeviceCount(2))
				if err != nil {
					return err
				}
				defer c1.Close()
				c2, err := pjrt.Open(pjrt.WithPlugin(path), pjrt.WithCPUDeviceCount(3))
				if err != nil {
					return err
				}
				defer c2.Close()
				if len(c1.Devices()) != 2 || len(c2.Devices()) != 3 {
					return wrongf("%d and %d devices", len(c1.Devices()), len(c2.Devices()))
				}
				return addWorks(h, c2, compileOn(h, c2, addModule(3), 3))
			},
		},
	}
}

// wheelZip returns a wheel (zip) holding the given files.
func wheelZip(files map[string]string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, data := range files {
		w, _ := z.Create(name)
		io.WriteString(w, data)
	}
	z.Close()
	return b.Bytes()
}

func sha(data []byte) string { s := sha256.Sum256(data); return hex.EncodeToString(s[:]) }

// index serves a package index for the package "hostile-plugin": its JSON API at
// /pypi/hostile-plugin/json (the body json gives, with {{URL}} replaced by the wheel's URL)
// and the wheel at /wheel.whl.
func index(h *H, json func(wheelURL string) string, wheel []byte, wheelStatus int) string {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	h.Cleanup(srv.Close)
	mux.HandleFunc("/pypi/hostile-plugin/json", func(w http.ResponseWriter, r *http.Request) {
		body := json(srv.URL + "/wheel.whl")
		if body == "" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	})
	mux.HandleFunc("/wheel.whl", func(w http.ResponseWriter, r *http.Request) {
		if wheelStatus != 0 {
			w.WriteHeader(wheelStatus)
			return
		}
		w.Write(wheel)
	})
	return srv.URL + "/pypi"
}

// release is the JSON of an index listing one file of version 1.0.
func release(filename, sha string) func(string) string {
	return func(url string) string {
		return fmt.Sprintf(`{"releases": {"1.0": [{"filename": %q, "url": %q, "size": 100, "packagetype": "bdist_wheel", "yanked": false, "digests": {"sha256": %q}}]}}`,
			filename, url, sha)
	}
}

var thisWheel = "hostile_plugin-1.0-py3-none-manylinux_2_27_" + map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH] + ".whl"

func installCases() []*hcase {
	const member = "hostile/plugin.so"
	good := wheelZip(map[string]string{member: "\x7fELF pretend plugin", "hostile/__init__.py": ""})
	plugin := plugins.Plugin{Name: "hostile", Package: "hostile-plugin", Version: "1.0", SOPath: member}
	inst := func(name string, cl class, json func(string) string, wheel []byte, status int, pin string, want ...any) *hcase {
		return &hcase{
			name: "install.Install: " + name, class: cl, entry: "pjrt/install", group: "install", want: is(want...),
			run: func(h *H) error {
				p := plugin
				p.SHA256 = pin
				_, err := install.Install(context.Background(), p, h.Dir(), install.Options{Index: index(h, json, wheel, status)})
				return err
			},
		}
	}
	return []*hcase{
		{
			name: "plugins.Lookup: an unknown plugin", class: classPlugins, entry: "pjrt/install", group: "install",
			want: is("plugins.ErrUnknownPlugin", plugins.ErrUnknownPlugin),
			run:  func(*H) error { _, err := plugins.Lookup("../../etc/passwd"); return err },
		},
		inst("the index answers 404", classPlugins, func(string) string { return "" }, good, 0, "", "install.ErrIndex", install.ErrIndex),
		inst("the index answers malformed JSON", classPlugins, func(string) string { return `{"releases": [` }, good, 0, "", "install.ErrIndex", install.ErrIndex),
		inst("the index lacks the version", classPlugins, func(string) string { return `{"releases": {"0.9": []}}` }, good, 0, "", "install.ErrIndex", install.ErrIndex),
		inst("the index has no wheel for this machine", classPlugins, release("hostile_plugin-1.0-py3-none-win_amd64.whl", sha(good)), good, 0, "",
			"install.ErrNoWheel", install.ErrNoWheel),
		inst("the index's sha256 is not the pin", classPlugins, release(thisWheel, sha(good)), good, 0, sha([]byte("other")),
			"install.ErrChecksum", install.ErrChecksum),
		inst("the wheel is not the file the index describes", classPlugins, release(thisWheel, sha([]byte("other"))), good, 0, "",
			"install.ErrChecksum", install.ErrChecksum),
		inst("the wheel is not a zip file", classPlugins, release(thisWheel, sha([]byte("not a zip"))), []byte("not a zip"), 0, "",
			"zip.ErrFormat", zip.ErrFormat),
		inst("the wheel lacks the plugin", classPlugins, release(thisWheel, sha(wheelZip(map[string]string{"other.so": "x"}))),
			wheelZip(map[string]string{"other.so": "x"}), 0, "", "install.ErrNotInWheel", install.ErrNotInWheel),
		inst("the wheel's URL answers 500", classPlugins, release(thisWheel, sha(good)), good, http.StatusInternalServerError, "",
			"install.ErrIndex", install.ErrIndex),
		{
			name: "install.Install: a cancelled context", class: classOwnership, entry: "pjrt/install", group: "install",
			want: is("context.Canceled", context.Canceled),
			run: func(h *H) error {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, err := install.Install(ctx, plugin, h.Dir(), install.Options{Index: index(h, release(thisWheel, sha(good)), good, 0)})
				return err
			},
		},
		{
			name: "install.Install: a good wheel installs, and again is kept", class: classPlugins, entry: "pjrt/install", group: "install",
			run: func(h *H) error {
				dir := h.Dir()
				p := plugin
				p.SHA256 = sha(good)
				url := index(h, release(thisWheel, sha(good)), good, 0)
				path, err := install.Install(context.Background(), p, dir, install.Options{Index: url})
				if err != nil {
					return err
				}
				data, err := os.ReadFile(path)
				if err != nil || string(data) != "\x7fELF pretend plugin" || path != p.Path(dir) {
					return wrongf("installed %s: %q, %v", path, data, err)
				}
				again, err := install.Install(context.Background(), p, dir, install.Options{Index: "http://127.0.0.1:1/unreachable"})
				if err != nil || again != path {
					return wrongf("the second Install went to the index: %q, %v", again, err)
				}
				return nil
			},
		},
		{
			name: "install.Install: a truncated installed plugin is reinstalled", class: classPlugins, entry: "pjrt/install", group: "install",
			run: func(h *H) error {
				dir := h.Dir()
				p := plugin
				p.SHA256 = sha(good)
				url := index(h, release(thisWheel, sha(good)), good, 0)
				path, err := install.Install(context.Background(), p, dir, install.Options{Index: url})
				h.Must(err)
				h.Must(os.Truncate(path, 4))
				if err := install.Verify(p, dir); !errors.Is(err, install.ErrDamaged) {
					return wrongf("Verify of a truncated plugin: %v", err)
				}
				if _, err := install.Install(context.Background(), p, dir, install.Options{Index: url}); err != nil {
					return err
				}
				if data, err := os.ReadFile(path); err != nil || string(data) != "\x7fELF pretend plugin" {
					return wrongf("after the second Install: %q, %v", data, err)
				}
				return nil
			},
		},
		{
			name: "install.Verify: a FIFO in place of the plugin file", class: classHangs, entry: "pjrt/install", group: "install",
			want: is("install.ErrDamaged", install.ErrDamaged),
			run: func(h *H) error {
				dir := h.Dir()
				p := plugin
				p.SHA256 = sha(good)
				path, err := install.Install(context.Background(), p, dir, install.Options{Index: index(h, release(thisWheel, sha(good)), good, 0)})
				h.Must(err)
				h.Must(os.Remove(path))
				h.Must(syscall.Mkfifo(path, 0o644))
				return install.Verify(p, dir)
			},
		},
		{
			name: "install.Install: a .download-*.whl an interrupted install left is removed", class: classOwnership, entry: "pjrt/install", group: "install",
			run: func(h *H) error {
				dir := h.Dir()
				p := plugin
				p.SHA256 = sha(good)
				stale := filepath.Join(filepath.Dir(p.Path(dir)), ".download-1234.whl")
				h.Must(os.MkdirAll(filepath.Dir(stale), 0o755))
				h.Must(os.WriteFile(stale, []byte("half a wheel"), 0o644))
				old := time.Now().Add(-install.StaleAfter - time.Minute)
				h.Must(os.Chtimes(stale, old, old))
				if _, err := install.Install(context.Background(), p, dir, install.Options{Index: index(h, release(thisWheel, sha(good)), good, 0)}); err != nil {
					return err
				}
				if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
					return wrongf("%s is still there: %v", stale, err)
				}
				return nil
			},
		},
	}
}
