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
	"io/fs"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xlamesh/xlamesh/internal/regfile"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// Errors, wrapped with context.
var (
	ErrNoWheel      = errors.New("no wheel for this platform")
	ErrChecksum     = errors.New("sha256 mismatch")
	ErrIndex        = errors.New("package index") // the index or its file host failed or lacks the release
	ErrNotInWheel   = errors.New("plugin file not in the wheel")
	ErrNotInstalled = errors.New("plugin not installed")     // no plugin file or stamp, or a stamp of another wheel
	ErrDamaged      = errors.New("installed plugin damaged") // the file's size or sha256 is not the one installed
)

// Options tune Install. The zero value is fine.
type Options struct {
	Index    string    // the JSON API root; default "https://pypi.org/pypi"
	Progress io.Writer // download progress lines; nil: none
	Client   *http.Client
}

// Install makes sure p is installed under dir and returns the plugin file's path. A plugin file
// whose size and sha256 are the ones its stamp recorded when it was installed (and the pins,
// where p has them), from the wheel of the pinned sha256, is kept; otherwise (missing, truncated,
// altered, an older stamp) the wheel is downloaded, checked and unpacked again, and
// opts.Progress, if set, says why. Every write goes through a temporary file renamed into
// place; temporary files an interrupted install left behind (older than StaleAfter) are removed
// first.
func Install(ctx context.Context, p plugins.Plugin, dir string, opts Options) (string, error) {
	dest := p.Path(dir)
	removeStale(filepath.Dir(dest), time.Now())
	if p.SHA256 != "" {
		err := verify(p, p.SHA256, dest)
		if err == nil {
			return dest, nil
		}
		reportReinstall(opts.Progress, err)
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
	if p.SHA256 == "" {
		err := verify(p, w.sha256, dest)
		if err == nil {
			return dest, nil
		}
		reportReinstall(opts.Progress, err)
	}
	whl, err := download(ctx, w, filepath.Dir(dest), opts)
	if err != nil {
		return "", err
	}
	defer os.Remove(whl)
	size, sum, err := unpack(whl, p, dest)
	if err != nil {
		return "", fmt.Errorf("install: %s==%s: %w", p.Package, p.Version, err)
	}
	if err := writeAtomic(stampPath(dest), stamp{wheel: w.sha256, size: size, sha256: sum}.bytes(), 0o644); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	return dest, nil
}

// Verify checks the plugin p installed under dir without the network: its stamp names the
// wheel of p's pin (any wheel for an unpinned p) and the plugin file is a regular file with the
// size and sha256 the stamp recorded when it was installed, and those of p's own pins where it
// has them. It returns nil, or an error wrapping ErrNotInstalled (nothing there, or a stamp of
// another wheel) or ErrDamaged (a truncated or altered file, or a stamp of an older xlamesh that
// recorded no size and sha256) that says what differs; Install repairs both.
func Verify(p plugins.Plugin, dir string) error { return verify(p, p.SHA256, p.Path(dir)) }

// StaleAfter is how old a temporary file of an install (.download-*.whl, .unpack-*, .tmp-*)
// must be for the next Install to remove it as left behind by an interrupted one. A download
// that is under way writes to its file all along, so its modification time stays recent.
const StaleAfter = 15 * time.Minute

// tempPatterns are the names of Install's temporary files.
var tempPatterns = []string{".download-*.whl", ".unpack-*", ".tmp-*"}

// removeStale removes the temporary files in dir older than StaleAfter.
func removeStale(dir string, now time.Time) {
	for _, pattern := range tempPatterns {
		names, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, name := range names {
			if st, err := os.Lstat(name); err == nil && now.Sub(st.ModTime()) > StaleAfter {
				_ = os.Remove(name)
			}
		}
	}
}

func reportReinstall(w io.Writer, err error) {
	if w != nil && !errors.Is(err, ErrNotInstalled) {
		fmt.Fprintf(w, "%v; reinstalling\n", err)
	}
}

// stamp is what the file .installed-sha256 beside a plugin records: the sha256 of the wheel it
// came from, and the size and sha256 of the plugin file as unpacked. Its text is
//
//	wheel <sha256>
//	plugin <size> <sha256>
//
// Stamps of older versions hold the wheel's sha256 alone (size -1 here).
type stamp struct {
	wheel  string
	size   int64
	sha256 string
}

func (s stamp) bytes() []byte {
	return fmt.Appendf(nil, "wheel %s\nplugin %d %s\n", s.wheel, s.size, s.sha256)
}

// maxStamp bounds the stamp file read: it is a few lines.
const maxStamp = 4 << 10

func stampPath(dest string) string { return filepath.Join(filepath.Dir(dest), ".installed-sha256") }

// readStamp reads and parses the stamp beside the plugin file dest.
func readStamp(dest string) (stamp, error) {
	data, err := regfile.ReadFile(stampPath(dest), maxStamp)
	if err != nil {
		return stamp{}, err
	}
	f := strings.Fields(string(data))
	switch {
	case len(f) == 1 && isHexSHA256(f[0]):
		return stamp{wheel: f[0], size: -1}, nil
	case len(f) == 5 && f[0] == "wheel" && f[2] == "plugin" && isHexSHA256(f[1]) && isHexSHA256(f[4]):
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err == nil && size >= 0 {
			return stamp{wheel: f[1], size: size, sha256: f[4]}, nil
		}
	}
	return stamp{}, fmt.Errorf("%s: not a stamp: %q", stampPath(dest), data)
}

func isHexSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// verify checks the plugin file dest against its stamp, which must name the wheel wheelSHA
// ("": any), and against p's pins.
func verify(p plugins.Plugin, wheelSHA, dest string) error {
	name := p.Package + "==" + p.Version
	st, err := readStamp(dest)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("install: %s: %w (no stamp in %s)", name, ErrNotInstalled, filepath.Dir(dest))
	}
	if err != nil {
		return fmt.Errorf("install: %s: %w: %w", name, ErrDamaged, err)
	}
	if wheelSHA != "" && st.wheel != wheelSHA {
		return fmt.Errorf("install: %s: %w: the stamp names the wheel %s, not %s", name, ErrNotInstalled, st.wheel, wheelSHA)
	}
	want := st
	if p.SOSHA256 != "" {
		if st.size >= 0 && (st.size != p.SOSize || st.sha256 != p.SOSHA256) {
			return fmt.Errorf("install: %s: %w: the stamp records %s (%d bytes), the pin is %s (%d bytes)",
				name, ErrDamaged, st.sha256, st.size, p.SOSHA256, p.SOSize)
		}
		want.size, want.sha256 = p.SOSize, p.SOSHA256
	}
	if want.size < 0 {
		return fmt.Errorf("install: %s: %w: the stamp of an older install records no size and sha256 of %s",
			name, ErrDamaged, dest)
	}
	size, sum, err := hashFile(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("install: %s: %w: %s is missing", name, ErrNotInstalled, dest)
	case err != nil:
		return fmt.Errorf("install: %s: %w: %w", name, ErrDamaged, err)
	case size != want.size:
		return fmt.Errorf("install: %s: %w: %s has %d bytes, %d were installed (truncated or replaced)",
			name, ErrDamaged, dest, size, want.size)
	case sum != want.sha256:
		return fmt.Errorf("install: %s: %w: %s has sha256 %s, %s was installed", name, ErrDamaged, dest, sum, want.sha256)
	}
	if st.size < 0 { // an older stamp, checked against the pins: record the file from now on
		_ = writeAtomic(stampPath(dest), stamp{wheel: st.wheel, size: size, sha256: sum}.bytes(), 0o644)
	}
	return nil
}

// hashFile returns the size and sha256 of the regular file at path.
func hashFile(path string) (int64, string, error) {
	f, _, err := regfile.Open(path, -1)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// wheel is one file of a release, as the index lists it.
type wheel struct {
	filename, url, sha256 string
	size                  int64
}

// findWheel asks the index for the release's files and picks the wheel for this machine.
func findWheel(ctx context.Context, p plugins.Plugin, opts Options) (wheel, error) {
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
	ok := false
	defer func() {
		if !ok { // every way out but success removes the partial file
			f.Close()
			os.Remove(f.Name())
		}
	}()
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
		return "", fmt.Errorf("install: downloading %s: %w", w.filename, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != w.sha256 {
		return "", fmt.Errorf("install: %s: %w: got %s, want %s", w.filename, ErrChecksum, got, w.sha256)
	}
	ok = true
	return f.Name(), nil
}

// unpack copies p's plugin file out of the wheel (a zip file) to dest, atomically, and returns
// its size and sha256; a file that differs from p's pins is refused (ErrChecksum) and never
// lands at dest.
func unpack(whl string, p plugins.Plugin, dest string) (size int64, sum string, err error) {
	z, err := zip.OpenReader(whl)
	if err != nil {
		return 0, "", err
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != p.SOPath {
			continue
		}
		src, err := f.Open()
		if err != nil {
			return 0, "", err
		}
		defer src.Close()
		tmp, err := os.CreateTemp(filepath.Dir(dest), ".unpack-*")
		if err != nil {
			return 0, "", err
		}
		h := sha256.New()
		size, err = io.Copy(io.MultiWriter(tmp, h), src)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		sum = hex.EncodeToString(h.Sum(nil))
		if err == nil && p.SOSHA256 != "" && (size != p.SOSize || sum != p.SOSHA256) {
			err = fmt.Errorf("%w: %s in the wheel has %d bytes and sha256 %s, the pin is %d bytes, %s",
				ErrChecksum, p.SOPath, size, sum, p.SOSize, p.SOSHA256)
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o755)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dest)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return 0, "", err
		}
		return size, sum, nil
	}
	return 0, "", fmt.Errorf("%w: %s", ErrNotInWheel, p.SOPath)
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
