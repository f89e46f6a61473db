package install

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// TestFindWheelSkipsYanked: a yanked file is never picked, neither when it comes first nor
// when it is the only wheel for this machine (then the error is ErrNoWheel).
func TestFindWheelSkipsYanked(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("plugin wheels are Linux wheels")
	}
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	file := func(name string, yanked bool) string {
		return fmt.Sprintf(`{"filename": "fake_pjrt-1.0-%s-manylinux_2_27_%s.whl", "url": "../files/%s.whl", "size": 10, "packagetype": "bdist_wheel", "yanked": %v, "digests": {"sha256": "%s"}}`,
			name, arch, name, yanked, name)
	}
	for _, tc := range []struct {
		name, files string
		want        string // the picked file's url, or "" for ErrNoWheel
	}{
		{"yanked first", file("bad", true) + "," + file("good", false), "/pypi/files/good.whl"},
		{"only yanked", file("bad", true), ""},
		{"none yanked", file("good", false), "/pypi/files/good.whl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"releases": {"1.0": [%s]}}`, tc.files)
			}))
			defer srv.Close()
			p := plugins.Plugin{Package: "fake-pjrt", Version: "1.0", SOPath: "fake/plugin.so"}
			w, err := findWheel(context.Background(), p, Options{Index: srv.URL + "/pypi", Client: srv.Client()})
			if tc.want == "" {
				if !errors.Is(err, ErrNoWheel) {
					t.Fatalf("got %+v, %v; want ErrNoWheel", w, err)
				}
				return
			}
			if err != nil || w.url != srv.URL+tc.want {
				t.Fatalf("got %+v, %v; want %s", w, err, srv.URL+tc.want)
			}
		})
	}
}
