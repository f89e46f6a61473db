package pjrt_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// TestFindCPUPluginInCheckout runs FindCPUPlugin inside a made-up xlamesh checkout with an
// empty user cache and XLAMESH_CACHE_DIR unset: it finds the plugin in the checkout's .cache,
// where make setup installs it; XLAMESH_CACHE_DIR set means that directory only.
func TestFindCPUPluginInCheckout(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/xlamesh/xlamesh\n"), 0o644))
	cpu, err := plugins.Lookup("cpu")
	require.NoError(t, err)
	cache := filepath.Join(root, ".cache")
	want := cpu.Path(cache)
	require.NoError(t, os.MkdirAll(filepath.Dir(want), 0o755))
	require.NoError(t, os.WriteFile(want, []byte("a plugin"), 0o755))
	user := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", user)
	t.Setenv(pjrt.EnvPlugin, "")
	t.Setenv(plugins.EnvCacheDir, "")
	require.NoError(t, os.Unsetenv(plugins.EnvCacheDir))
	sub := filepath.Join(root, "jit")
	require.NoError(t, os.Mkdir(sub, 0o755))
	t.Chdir(sub)

	got, err := pjrt.FindCPUPlugin()
	require.NoError(t, err)
	assert.Equal(t, want, got)

	t.Setenv(plugins.EnvCacheDir, filepath.Join(root, "elsewhere"))
	_, err = pjrt.FindCPUPlugin()
	assert.True(t, errors.Is(err, pjrt.ErrPluginNotFound), "%v", err)
	assert.Contains(t, err.Error(), "(looked for "+cpu.Path(filepath.Join(root, "elsewhere"))+");")

	require.NoError(t, os.Unsetenv(plugins.EnvCacheDir))
	require.NoError(t, os.Remove(want))
	_, err = pjrt.FindCPUPlugin()
	assert.True(t, errors.Is(err, pjrt.ErrPluginNotFound), "%v", err)
	assert.Contains(t, err.Error(), "(looked for "+cpu.Path(filepath.Join(user, "xlamesh"))+", "+want+");")
}
