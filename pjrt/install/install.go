package install

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// EnvCacheDir names the environment variable that moves the cache (the same variable package
// pjrt reads).
const EnvCacheDir = "XLAMESH_CACHE_DIR"

// Plugin is a PJRT plugin shipped in a PyPI wheel.
type Plugin struct {
	Name    string // short name: "cpu", "cpu-0.115", "cuda12", "cuda13", "tpu"
	Package string // PyPI project, e.g. "xla-cpu-pjrt"
	Version string // PyPI version, e.g. "0.0.1"
	SHA256  string // the wheel's sha256 for this machine's platform; "" trusts the index's
	SOPath  string // the plugin's path inside the wheel
	API     string // the PJRT C API version it reports, for the record (e.g. "0.81")
}

// Known are the plugins xlamesh is tested with, pinned (x86-64 Linux wheels). "cpu" is the one
// pjrt.Open uses by default.
var Known = []Plugin{
	{"cpu", "xla-cpu-pjrt", "0.0.1", "55837b6b7b47daa717f2d9a5a03563ea0ceaa338d06a81a1e2d3f060d960decc",
		"xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so", "0.81"},
	{"cpu-0.115", "lammps-jax-pjrt-cpu", "0.11.2", "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1",
		"lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so", "0.115"},
	{"cuda12", "jax-cuda12-pjrt", "0.12.0.1", "5ec28e06198d094031c37590b4ea753ae8cde4879ab4b60baf40f0dffb673286",
		"jax_plugins/xla_cuda12/xla_cuda_plugin.so", "0.116"},
	{"cuda13", "jax-cuda13-pjrt", "0.12.0.1", "5899bb6177eda86ea532afb9a26794f2bdd04966f6a01f9028266b16c2b6cf90",
		"jax_plugins/xla_cuda13/xla_cuda_plugin.so", "0.116"},
	{"tpu", "libtpu", "0.0.52", "f5e2e596eaea9357fbb5a6755a7a9007c6ab75bfde4a55191b03eff402971140",
		"libtpu/libtpu.so", "0.117"},
}

// Lookup returns the known plugin with the given short name.
func Lookup(name string) (Plugin, error) {
	var names []string
	for _, p := range Known {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Plugin{}, fmt.Errorf("install: %w %q (known: %s)", ErrUnknownPlugin, name, strings.Join(names, ", "))
}

// Errors, wrapped with context.
var (
	ErrUnknownPlugin = errors.New("unknown plugin")
	ErrNoWheel       = errors.New("no wheel for this platform")
	ErrChecksum      = errors.New("sha256 mismatch")
	ErrIndex         = errors.New("package index") // the index or its file host failed or lacks the release
	ErrNotInWheel    = errors.New("plugin file not in the wheel")
)

// Dir returns the cache directory: $XLAMESH_CACHE_DIR, or os.UserCacheDir()/xlamesh.
func Dir() (string, error) {
	if d := os.Getenv(EnvCacheDir); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("install: no cache directory (set %s): %w", EnvCacheDir, err)
	}
	return filepath.Join(d, "xlamesh"), nil
}

// Path returns where p is (or would be) installed under dir.
func (p Plugin) Path(dir string) string {
	return filepath.Join(dir, "plugins", p.Package+"-"+p.Version, path.Base(p.SOPath))
}

// Options tune Install. The zero value is fine.
type Options struct {
	Index    string    // the JSON API root; default "https://pypi.org/pypi"
	Progress io.Writer // download progress lines; nil: none
	Client   *http.Client
}

// Install makes sure p is installed under dir and returns the plugin file's path. A file already
// there with the wheel's sha256 stamp is kept; otherwise the wheel is downloaded, checked and
// unpacked. Every write goes through a temporary file renamed into place.
func Install(ctx context.Context, p Plugin, dir string, opts Options) (string, error) {
	dest := p.Path(dir)
	stamp := filepath.Join(filepath.Dir(dest), ".installed-sha256")
	if p.SHA256 != "" {
		if got, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(got)) == p.SHA256 {
			if _, err := os.Stat(dest); err == nil {
				return dest, nil
			}
		}
	}
	if opts.Index == "" {
		opts.Index = "https://pypi.org/pypi"
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 30 * time.Minute}
	}
	w, err := findWheel(ctx, p, opts)
	if err != nil {
		return "", err
	}
	if p.SHA256 != "" && w.sha256 != p.SHA256 {
		return "", fmt.Errorf("install: %s==%s: %w: the index lists %s for %s, the pin is %s",
			p.Package, p.Version, ErrChecksum, w.sha256, w.filename, p.SHA256)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	if got, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(got)) == w.sha256 {
		if _, err := os.Stat(dest); err == nil {
			return dest, nil
		}
	}
	whl, err := download(ctx, w, filepath.Dir(dest), opts)
	if err != nil {
		return "", err
	}
	defer os.Remove(whl)
	if err := unpack(whl, p.SOPath, dest); err != nil {
		return "", fmt.Errorf("install: %s==%s: %w", p.Package, p.Version, err)
	}
	if err := writeAtomic(stamp, []byte(w.sha256+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	return dest, nil
}

// wheel is one file of a release, as the index lists it.
type wheel struct {
	filename, url, sha256 string
	size                  int64
}

// findWheel asks the index for the release's files and picks the wheel for this machine.
func findWheel(ctx context.Context, p Plugin, opts Options) (wheel, error) {
	url := strings.TrimRight(opts.Index, "/") + "/" + p.Package + "/json"
	base, err := neturl.Parse(url)
	if err != nil {
		return wheel{}, fmt.Errorf("install: %w: %v", ErrIndex, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return wheel{}, fmt.Errorf("install: %w: %w", ErrIndex, err)
	}
	resp, err := opts.Client.Do(req)
	if err != nil {
		return wheel{}, fmt.Errorf("install: %w: %w", ErrIndex, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return wheel{}, fmt.Errorf("install: %w: GET %s: %s", ErrIndex, url, resp.Status)
	}
	var doc struct {
		Releases map[string][]struct {
			Filename    string            `json:"filename"`
			URL         string            `json:"url"`
			Size        int64             `json:"size"`
			PackageType string            `json:"packagetype"`
			Yanked      bool              `json:"yanked"`
			Digests     map[string]string `json:"digests"`
		} `json:"releases"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return wheel{}, fmt.Errorf("install: %w: reading %s: %v", ErrIndex, url, err)
	}
	files, ok := doc.Releases[p.Version]
	if !ok {
		var versions []string
		for v := range doc.Releases {
			versions = append(versions, v)
		}
		sort.Strings(versions)
		return wheel{}, fmt.Errorf("install: %w: %s has no version %s (it has %s)", ErrIndex, p.Package, p.Version, strings.Join(versions, ", "))
	}
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	var seen []string
	var found *wheel
	for _, f := range files {
		seen = append(seen, f.Filename)
		if f.PackageType != "bdist_wheel" || f.Yanked || runtime.GOOS != "linux" || arch == "" ||
			!strings.Contains(f.Filename, "linux") || !strings.HasSuffix(f.Filename, "_"+arch+".whl") {
			continue
		}
		// Some projects' files are listed with URLs relative to the JSON document.
		ref, err := neturl.Parse(f.URL)
		if err != nil {
			return wheel{}, fmt.Errorf("install: %w: %s lists %q: %v", ErrIndex, url, f.URL, err)
		}
		w := wheel{filename: f.Filename, url: base.ResolveReference(ref).String(), sha256: f.Digests["sha256"], size: f.Size}
		if w.sha256 == p.SHA256 {
			return w, nil // the pinned file among several for this platform (e.g. one per Python)
		}
		if found == nil {
			found = &w
		}
	}
	if found != nil {
		return *found, nil
	}
	return wheel{}, fmt.Errorf("install: %s==%s: %w %s/%s (files: %s)", p.Package, p.Version, ErrNoWheel,
		runtime.GOOS, runtime.GOARCH, strings.Join(seen, ", "))
}

// download fetches w into dir, checking its sha256 as it streams, and returns the file's path.
func download(ctx context.Context, w wheel, dir string, opts Options) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url, nil)
	if err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	resp, err := opts.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("install: %w: downloading %s: %w", ErrIndex, w.filename, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("install: %w: downloading %s: %s", ErrIndex, w.url, resp.Status)
	}
	f, err := os.CreateTemp(dir, ".download-*.whl")
	if err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	h := sha256.New()
	var src io.Reader = resp.Body
	if opts.Progress != nil {
		src = &progress{r: resp.Body, w: opts.Progress, name: w.filename, total: w.size, start: time.Now()}
	}
	_, err = io.Copy(io.MultiWriter(f, h), src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("install: downloading %s: %w", w.filename, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != w.sha256 {
		os.Remove(f.Name())
		return "", fmt.Errorf("install: %s: %w: got %s, want %s", w.filename, ErrChecksum, got, w.sha256)
	}
	return f.Name(), nil
}

// unpack copies member of the wheel (a zip file) to dest, atomically.
func unpack(whl, member, dest string) error {
	z, err := zip.OpenReader(whl)
	if err != nil {
		return err
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != member {
			continue
		}
		src, err := f.Open()
		if err != nil {
			return err
		}
		defer src.Close()
		tmp, err := os.CreateTemp(filepath.Dir(dest), ".unpack-*")
		if err != nil {
			return err
		}
		_, err = io.Copy(tmp, src)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o755)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dest)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
		return err
	}
	return fmt.Errorf("%w: %s", ErrNotInWheel, member)
}

func writeAtomic(name string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// progress reports a download's progress at most twice a second, and at the end.
type progress struct {
	r     io.Reader
	w     io.Writer
	name  string
	total int64
	done  int64
	start time.Time
	last  time.Time
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if now := time.Now(); now.Sub(p.last) > 500*time.Millisecond || err == io.EOF {
		p.last = now
		mb := float64(p.done) / (1 << 20)
		rate := mb / max(now.Sub(p.start).Seconds(), 1e-3)
		if p.total > 0 {
			fmt.Fprintf(p.w, "\r%s: %.0f / %.0f MiB (%.0f%%, %.1f MiB/s)", p.name, mb, float64(p.total)/(1<<20), 100*float64(p.done)/float64(p.total), rate)
		} else {
			fmt.Fprintf(p.w, "\r%s: %.0f MiB (%.1f MiB/s)", p.name, mb, rate)
		}
		if err == io.EOF {
			fmt.Fprintln(p.w)
		}
	}
	return n, err
}
