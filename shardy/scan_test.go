package shardy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeshOpsInModuleTokens: mesh ops are found as tokens of the MLIR scanner, wherever they
// sit on a line, and never inside comments or strings.
func TestMeshOpsInModuleTokens(t *testing.T) {
	module := `module @m attributes {doc = "sdy.mesh @fake = <[\22q\22=2]>"} { sdy.mesh @a = <["x"=2]> loc("f.py":1:1)
  // sdy.mesh @commented = <["c"=2]>
  sdy.mesh @"b-1" = #sdy.mesh<["y"=4, "z"=1]>   sdy.mesh @c = <[], device_ids=[3]>
}`
	ops, err := MeshOpsInModule(module)
	require.NoError(t, err)
	var got []string
	for _, op := range ops {
		got = append(got, op.String())
	}
	assert.Equal(t, []string{`sdy.mesh @a = <["x"=2]>`, `sdy.mesh @"b-1" = <["y"=4, "z"=1]>`, `sdy.mesh @c = <[], device_ids=[3]>`}, got)

	// A parse error is placed in the module, not in its line.
	_, err = MeshOpsInModule("module {\n  sdy.mesh @a = <[\"x\"=2, \"y\"]>\n}")
	var pe *ParseError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, 37, pe.Offset) // the "]" where "=" belongs
	_, err = MeshOpsInModule("module {\n  sdy.mesh @a = <[\"x\n")
	require.ErrorIs(t, err, ErrSyntax)
}
