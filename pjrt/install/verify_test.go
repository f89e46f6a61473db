package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// fakeInstall serves a wheel holding content as fake/plugin.so and installs it into a new
// directory; it returns the plugin, the directory and the options that reach the index.
func fakeInstall(t *testing.T, content string) (plugins.Plugin, string, Options) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("plugin wheels are Linux wheels")
	}
	whl := wheelBytes(t, "fake/plugin.so", []byte(content))
	sum := sha256.Sum256(whl)
	srv := serve(t, whl, hex.EncodeToString(sum[:]))
	p := plugins.Plugin{Name: "fake", Package: "fake-pjrt", Version: "1.0", SHA256: hex.EncodeToString(sum[:]), SOPath: "fake/plugin.so"}
	dir := t.TempDir()
	opts := Options{Index: srv.URL + "/pypi"}
	if _, err := Install(context.Background(), p, dir, opts); err != nil {
		t.Fatal(err)
	}
	return p, dir, opts
}

func hexSHA(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func TestStampRecordsThePlugin(t *testing.T) {
	p, dir, _ := fakeInstall(t, "plugin bytes")
	got, err := os.ReadFile(filepath.Join(dir, "plugins", "fake-pjrt-1.0", ".installed-sha256"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("wheel %s\nplugin 12 %s\n", p.SHA256, hexSHA("plugin bytes"))
	if string(got) != want {
		t.Errorf("stamp %q, want %q", got, want)
	}
	if err := Verify(p, dir); err != nil {
		t.Errorf("Verify of a fresh install: %v", err)
	}
}

// TestInstallRepairsDamage damages an installed plugin in each way and checks that Verify
// reports it (ErrDamaged, naming what differs) and that Install puts the right file back.
func TestInstallRepairsDamage(t *testing.T) {
	const content = "plugin bytes, the whole of them"
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, so, stamp string)
		want   error
		msg    string
	}{
		{"truncated", func(t *testing.T, so, _ string) { must(t, os.Truncate(so, 5)) }, ErrDamaged, "has 5 bytes, 31 were installed"},
		{"same size, other bytes", func(t *testing.T, so, _ string) {
			must(t, os.WriteFile(so, []byte(strings.ToUpper(content)), 0o755))
		}, ErrDamaged, "has sha256 " + hexSHA(strings.ToUpper(content))},
		{"removed", func(t *testing.T, so, _ string) { must(t, os.Remove(so)) }, ErrNotInstalled, "is missing"},
		{"a FIFO in its place", func(t *testing.T, so, _ string) {
			must(t, os.Remove(so))
			must(t, syscall.Mkfifo(so, 0o644))
		}, ErrDamaged, "not a regular file (a named pipe)"},
		{"a stamp of an older install", func(t *testing.T, _, stamp string) {
			data, err := os.ReadFile(stamp)
			must(t, err)
			must(t, os.WriteFile(stamp, []byte(strings.Fields(string(data))[1]+"\n"), 0o644))
		}, ErrDamaged, "the stamp of an older install records no size and sha256"},
		{"a garbled stamp", func(t *testing.T, _, stamp string) { must(t, os.WriteFile(stamp, []byte("wheel x\n"), 0o644)) }, ErrDamaged, "not a stamp"},
		{"a FIFO as the stamp", func(t *testing.T, _, stamp string) {
			must(t, os.Remove(stamp))
			must(t, syscall.Mkfifo(stamp, 0o644))
		}, ErrDamaged, "not a regular file (a named pipe)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, dir, opts := fakeInstall(t, content)
			so := p.Path(dir)
			stamp := filepath.Join(filepath.Dir(so), ".installed-sha256")
			tc.damage(t, so, stamp)
			err := Verify(p, dir)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Verify: %v; want %v with %q", err, tc.want, tc.msg)
			}
			var progress bytes.Buffer
			opts.Progress = &progress
			path, err := Install(context.Background(), p, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != content {
				t.Errorf("after Install: %q, %v", got, err)
			}
			if err := Verify(p, dir); err != nil {
				t.Errorf("Verify after the repair: %v", err)
			}
			if tc.want == ErrDamaged && !strings.Contains(progress.String(), "; reinstalling") {
				t.Errorf("Install did not say it reinstalls: %q", progress.String())
			}
		})
	}
}

// TestVerifyAgainstPins checks a plugin with pinned size and sha256: an older stamp is checked
// against the pins and upgraded without the network, and a file that is not the pinned one is
// damaged even when the stamp agrees with it.
func TestVerifyAgainstPins(t *testing.T) {
	const content = "pinned plugin"
	p, dir, _ := fakeInstall(t, content)
	p.SOSize, p.SOSHA256 = int64(len(content)), hexSHA(content)
	stamp := filepath.Join(filepath.Dir(p.Path(dir)), ".installed-sha256")
	must(t, os.WriteFile(stamp, []byte(p.SHA256+"\n"), 0o644))
	if err := Verify(p, dir); err != nil {
		t.Fatalf("Verify with an older stamp and pins: %v", err)
	}
	got, _ := os.ReadFile(stamp)
	if want := fmt.Sprintf("wheel %s\nplugin 13 %s\n", p.SHA256, p.SOSHA256); string(got) != want {
		t.Errorf("upgraded stamp %q, want %q", got, want)
	}
	other := p
	other.SOSHA256 = hexSHA("another build")
	if err := Verify(other, dir); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "the pin is "+other.SOSHA256) {
		t.Errorf("Verify against another pin: %v", err)
	}
	// A wheel whose plugin is not the pinned one is refused before it lands.
	_, err := Install(context.Background(), other, t.TempDir(), Options{Index: serveOf(t, content)})
	if !errors.Is(err, ErrChecksum) {
		t.Errorf("Install of a wheel whose plugin is not the pinned one: %v", err)
	}
}

// serveOf serves a wheel holding content as fake/plugin.so and returns the index URL.
func serveOf(t *testing.T, content string) string {
	whl := wheelBytes(t, "fake/plugin.so", []byte(content))
	sum := sha256.Sum256(whl)
	return serve(t, whl, hex.EncodeToString(sum[:])).URL + "/pypi"
}

// TestStaleDownloadsRemoved leaves the temporary files an interrupted install leaves, old and
// new, and checks that the next Install removes the old ones only.
func TestStaleDownloadsRemoved(t *testing.T) {
	p, dir, opts := fakeInstall(t, "plugin bytes")
	pdir := filepath.Dir(p.Path(dir))
	old := time.Now().Add(-StaleAfter - time.Minute)
	var stale, fresh []string
	for _, name := range []string{".download-123.whl", ".unpack-456", ".tmp-789"} {
		s, f := filepath.Join(pdir, name), filepath.Join(pdir, strings.Replace(name, "-", "-fresh", 1))
		must(t, os.WriteFile(s, []byte("partial"), 0o644))
		must(t, os.Chtimes(s, old, old))
		must(t, os.WriteFile(f, []byte("under way"), 0o644))
		stale, fresh = append(stale, s), append(fresh, f)
	}
	if _, err := Install(context.Background(), p, dir, opts); err != nil {
		t.Fatal(err)
	}
	for _, s := range stale {
		if _, err := os.Stat(s); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived the next Install: %v", s, err)
		}
	}
	for _, f := range fresh {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s (recent, maybe under way) was removed: %v", f, err)
		}
	}
}

// TestFailedDownloadLeavesNothing interrupts a download (the context ends while the body
// streams) and serves a wheel that is not the one listed: neither leaves a file behind.
func TestFailedDownloadLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("plugin wheels are Linux wheels")
	}
	whl := wheelBytes(t, "fake/plugin.so", bytes.Repeat([]byte("x"), 1<<20))
	sum := sha256.Sum256(whl)
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pypi/fake-pjrt/json":
			fmt.Fprintf(w, `{"releases": {"1.0": [{"filename": "fake_pjrt-1.0-py3-none-manylinux_2_27_%s.whl", "url": "/files/fake.whl", "size": %d, "packagetype": "bdist_wheel", "digests": {"sha256": %q}}]}}`,
				arch, len(whl), hex.EncodeToString(sum[:]))
		case "/files/fake.whl":
			w.Header().Set("Content-Length", fmt.Sprint(len(whl)))
			w.Write(whl[:len(whl)/2])
			w.(http.Flusher).Flush()
			close(started)
			<-r.Context().Done() // the rest never comes
		}
	}))
	defer srv.Close()
	p := plugins.Plugin{Name: "fake", Package: "fake-pjrt", Version: "1.0", SOPath: "fake/plugin.so"}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := Install(ctx, p, dir, Options{Index: srv.URL + "/pypi"}); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted download: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "plugins", "fake-pjrt-1.0", ".*"))
	if len(left) != 0 {
		t.Errorf("an interrupted download left %v", left)
	}
	// The wheel is not the file the index lists.
	bad := serve(t, whl, hexSHA("another wheel"))
	if _, err := Install(context.Background(), p, dir, Options{Index: bad.URL + "/pypi"}); !errors.Is(err, ErrChecksum) {
		t.Errorf("wrong wheel: %v", err)
	}
	left, _ = filepath.Glob(filepath.Join(dir, "plugins", "fake-pjrt-1.0", ".*"))
	if len(left) != 0 {
		t.Errorf("a wheel with the wrong sha256 left %v", left)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
