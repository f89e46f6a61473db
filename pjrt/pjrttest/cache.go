package pjrttest

import (
	"fmt"
	"os"
	"sync"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

var repoCacheOnce sync.Once

// CacheDir returns the plugin cache the tests use: $XLAMESH_CACHE_DIR, else the checkout's
// .cache when the tests run inside an xlamesh checkout, else the user cache (plugins.Dir).
func CacheDir() (string, error) {
	useRepoCache()
	return plugins.Dir()
}

// useRepoCache points pjrt at the checkout's own cache (<repo>/.cache, where `make setup`
// installs the plugins; plugins.CheckoutCache) when XLAMESH_CACHE_DIR is unset and the tests run
// inside an xlamesh checkout, so that the tests' installs and caches go there too. pjrt.Open's
// own lookup finds the checkout's plugins without it (Examples rely on that).
func useRepoCache() {
	repoCacheOnce.Do(func() {
		if os.Getenv(plugins.EnvCacheDir) != "" {
			return
		}
		if cache := plugins.CheckoutCache(); cache != "" {
			_ = os.Setenv(plugins.EnvCacheDir, cache)
		}
	})
}

// CPUPlugin returns the path where `xlamesh install-plugin -plugin name` puts the pinned plugin
// name (pjrt/plugins.Known: "cpu", "cpu-0.81", ...) in the tests' cache (CacheDir), whatever
// $XLAMESH_PJRT_PLUGIN says. The error says how to install it when the file is missing.
func CPUPlugin(name string) (string, error) {
	p, err := plugins.Lookup(name)
	if err != nil {
		return "", err
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	path := p.Path(dir)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("pjrttest: %w: the %s plugin is not at %s; install it with `go run ./cmd/xlamesh install-plugin -plugin %s` (make setup does)", pjrt.ErrPluginNotFound, name, path, name)
	}
	return path, nil
}

// OtherCPUPlugin returns the path of the pinned CPU plugin the tests' client does not use: the
// API 0.81 one ("cpu-0.81") when the client runs the default CPU plugin, else the default one
// ("cpu"), as in make unit's second pass, where $XLAMESH_PJRT_PLUGIN names the API 0.81 plugin.
func OtherCPUPlugin() (string, error) {
	def, err := CPUPlugin("cpu")
	if err != nil {
		return "", err
	}
	used, err := pjrt.FindCPUPlugin()
	if err != nil {
		return "", err
	}
	if used == def {
		return CPUPlugin("cpu-0.81")
	}
	return def, nil
}
