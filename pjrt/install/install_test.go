package install

import (
	"archive/zip"
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
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// The real index is used by tools/newcomer.sh (run by make test); these tests serve a small
// index and wheel from this process to reach the error paths the real one never takes.

func wheelBytes(t *testing.T, member string, content []byte) []byte {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, err := z.Create(member)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(content)
	z.Close()
	return buf.Bytes()
}

func serve(t *testing.T, whl []byte, listed string) *httptest.Server {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pypi/fake-pjrt/json":
			fmt.Fprintf(w, `{"releases": {"1.0": [{"filename": "fake_pjrt-1.0-py3-none-manylinux_2_27_%s.whl", "url": "../files/fake.whl", "size": %d, "packagetype": "bdist_wheel", "digests": {"sha256": %q}}]}}`,
				arch, len(whl), listed)
		case "/pypi/files/fake.whl": // listed relative to the JSON document, as some projects are
			w.Write(whl)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestInstall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("plugin wheels are Linux wheels")
	}
	whl := wheelBytes(t, "fake/plugin.so", []byte("plugin bytes"))
	sum := sha256.Sum256(whl)
	hexSum := hex.EncodeToString(sum[:])
	srv := serve(t, whl, hexSum)
	p := plugins.Plugin{Name: "fake", Package: "fake-pjrt", Version: "1.0", SHA256: hexSum, SOPath: "fake/plugin.so"}
	dir := t.TempDir()
	var progress bytes.Buffer
	opts := Options{Index: srv.URL + "/pypi", Progress: &progress}
	path, err := Install(context.Background(), p, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "plugins", "fake-pjrt-1.0", "plugin.so"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	if got, _ := os.ReadFile(path); string(got) != "plugin bytes" {
		t.Errorf("installed %q", got)
	}
	if !bytes.Contains(progress.Bytes(), []byte("100%")) {
		t.Errorf("progress %q", progress.String())
	}
	srv.Close() // installed: no network needed any more
	if again, err := Install(context.Background(), p, dir, opts); err != nil || again != path {
		t.Errorf("second install: %v, %v", again, err)
	}

	for _, tc := range []struct {
		name   string
		plugin plugins.Plugin
		listed string
		want   error
	}{
		{"pin differs from index", plugins.Plugin{Package: "fake-pjrt", Version: "1.0", SHA256: "00", SOPath: "fake/plugin.so"}, hexSum, ErrChecksum},
		{"download differs from index", plugins.Plugin{Package: "fake-pjrt", Version: "1.0", SOPath: "fake/plugin.so"}, "ff", ErrChecksum},
		{"no such version", plugins.Plugin{Package: "fake-pjrt", Version: "2.0", SOPath: "fake/plugin.so"}, hexSum, ErrIndex},
		{"no such package", plugins.Plugin{Package: "absent", Version: "1.0", SOPath: "x.so"}, hexSum, ErrIndex},
		{"not in the wheel", plugins.Plugin{Package: "fake-pjrt", Version: "1.0", SOPath: "other.so"}, hexSum, ErrNotInWheel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, whl, tc.listed)
			_, err := Install(context.Background(), tc.plugin, t.TempDir(), Options{Index: srv.URL + "/pypi"})
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}
