package shardy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// balanced returns the bracketed text of s starting at s[start] (one of
// '<', '[', '{') up to its matching closer, skipping string literals.
func balanced(t *testing.T, s string, start int) string {
	depth := 0
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '<', '[', '{':
			depth++
		case '>', ']', '}':
			depth--
			if depth == 0 {
				return s[start : i+1]
			}
		}
	}
	t.Fatalf("unbalanced text at %d: %.40q", start, s[start:])
	return ""
}

// attrsAfter returns the bracketed texts following each occurrence of
// marker (the bracket being the marker's last byte).
func attrsAfter(t *testing.T, s, marker string) []string {
	var out []string
	for off := 0; ; {
		i := strings.Index(s[off:], marker)
		if i < 0 {
			return out
		}
		start := off + i + len(marker) - 1
		out = append(out, balanced(t, s, start))
		off = start + 1
	}
}

// TestParseJAXModules parses every sdy attribute of modules lowered by JAX
// (testdata/jax_modules.json, from testdata/gen_jax_modules.py) and checks
// that it prints back byte for byte and validates against the module's mesh.
func TestParseJAXModules(t *testing.T) {
	b, err := os.ReadFile("testdata/jax_modules.json")
	require.NoError(t, err)
	var data struct {
		JAX     string
		Modules []struct{ Name, Text string }
	}
	require.NoError(t, json.Unmarshal(b, &data))
	require.NotEmpty(t, data.Modules)
	counts := map[string]int{}
	for _, mod := range data.Modules {
		text := mod.Text
		meshes, err := MeshOpsInModule(text)
		require.NoError(t, err, mod.Name)
		require.NoError(t, ValidateMeshOps(meshes), mod.Name)
		for _, op := range meshes {
			assert.Contains(t, text, "\n  "+op.JAXString()+"\n", mod.Name)
			counts["sdy.mesh"]++
		}
		for _, a := range attrsAfter(t, text, "#sdy.sharding<") {
			s, err := ParseTensorSharding("#sdy.sharding" + a)
			require.NoError(t, err, "%s: %s", mod.Name, a)
			assert.Equal(t, "#sdy.sharding"+a, s.String())
			assert.NoError(t, s.ValidateIn(meshes, -1), a)
			counts["sdy.sharding"]++
		}
		for line := range strings.Lines(text) {
			if i := strings.Index(line, "sdy.sharding_constraint %"); i >= 0 {
				j := strings.Index(line[i:], " <")
				require.Positive(t, j, line)
				a := balanced(t, line, i+j+1)
				s, err := ParseTensorSharding(a)
				require.NoError(t, err, "%s: %s", mod.Name, a)
				assert.Equal(t, a, s.Stripped())
				assert.NoError(t, s.ValidateIn(meshes, -1), a)
				counts["sdy.sharding_constraint"]++
			}
		}
		for _, marker := range []string{"in_shardings=[", "out_shardings=["} {
			for _, a := range attrsAfter(t, text, marker) {
				list, err := ParseShardingList(a)
				require.NoError(t, err, "%s: %s", mod.Name, a)
				parts := make([]string, len(list))
				for i, s := range list {
					parts[i] = s.Stripped()
					assert.NoError(t, s.ValidateIn(meshes, -1), a)
				}
				assert.Equal(t, a, "["+strings.Join(parts, ", ")+"]")
				counts[marker]++
			}
		}
		for _, a := range attrsAfter(t, text, "manual_axes={") {
			m, err := ParseManualAxes(a)
			require.NoError(t, err, a)
			assert.Equal(t, a, m.String())
			require.NoError(t, m.Validate(meshes[0].Mesh()))
			counts["manual_axes"]++
		}
	}
	t.Logf("JAX %s: %v", data.JAX, counts)
	for _, k := range []string{"sdy.mesh", "sdy.sharding", "sdy.sharding_constraint", "in_shardings=[", "manual_axes"} {
		assert.Positive(t, counts[k], k)
	}
}
