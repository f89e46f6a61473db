package pjrttest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/install"
)

var repoCacheOnce sync.Once

// CacheDir returns the plugin cache the tests use: $XLAMESH_CACHE_DIR, else the checkout's
// .cache when the tests run inside an xlamesh checkout, else the user cache (install.Dir).
func CacheDir() (string, error) {
	useRepoCache()
	return install.Dir()
}

// useRepoCache points pjrt at the checkout's own cache (<repo>/.cache, where `make setup`
// installs the plugins) when XLAMESH_CACHE_DIR is unset and the tests run inside an xlamesh
// checkout, so `go test ./...` there works without setting anything. The library itself never
// looks for a checkout: programs find plugins in the user cache.
func useRepoCache() {
	repoCacheOnce.Do(func() {
		if os.Getenv(pjrt.EnvCacheDir) != "" {
			return
		}
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && strings.HasPrefix(string(data), "module github.com/xlamesh/xlamesh\n") {
				if st, err := os.Stat(filepath.Join(dir, ".cache")); err == nil && st.IsDir() {
					_ = os.Setenv(pjrt.EnvCacheDir, filepath.Join(dir, ".cache"))
				}
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
}
