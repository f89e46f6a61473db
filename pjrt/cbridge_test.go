package pjrt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGopjrtLayout guards the field paths cbridge.go reads from gopjrt v0.10.0's handles; an
// upgrade of gopjrt that moves them fails here with the field's name.
func TestGopjrtLayout(t *testing.T) {
	c, err := Open(WithCPUDeviceCount(2))
	require.NoError(t, err, InstallHint)
	defer c.Close()
	_, err = pluginAPI(c.plugin.g)
	require.NoError(t, err)
	_, err = cHandle(c.devices[0].g, "cDevice")
	require.NoError(t, err)
	exe, err := c.Compile(`module { func.func public @main(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> } }`, CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	_, err = cHandle(exe.g, "wrapper", "c")
	require.NoError(t, err)

	type inner struct{ p *int }
	type outer struct{ in *inner }
	_, err = cHandle(&outer{in: &inner{}}, "in", "missing")
	require.ErrorContains(t, err, `no field "missing"`)
	_, err = cHandle(&outer{in: &inner{}}, "in", "p")
	require.ErrorContains(t, err, "is nil")
	_, err = cHandle((*outer)(nil), "in")
	require.ErrorContains(t, err, "nil")
}
