package pjrttest

import (
	"os"
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
// installs the plugins; install.CheckoutCache) when XLAMESH_CACHE_DIR is unset and the tests run
// inside an xlamesh checkout, so that the tests' installs and caches go there too. pjrt.Open's
// own lookup finds the checkout's plugins without it (Examples rely on that).
func useRepoCache() {
	repoCacheOnce.Do(func() {
		if os.Getenv(pjrt.EnvCacheDir) != "" {
			return
		}
		if cache := install.CheckoutCache(); cache != "" {
			_ = os.Setenv(pjrt.EnvCacheDir, cache)
		}
	})
}
