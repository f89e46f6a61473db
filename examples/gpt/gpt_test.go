package gpt_test

import (
	_ "embed"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/examples/gpt"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// golden is testdata/oracle/gpt.json, written by tools/oracle/gpt.py.
type golden struct {
	JAXVersion   string    `json:"jax_version"`
	OptaxVersion string    `json:"optax_version"`
	Steps        int       `json:"steps"`
	Vocab        int       `json:"vocab"`
	Losses       []float64 `json:"losses"`
	ModelLines   int       `json:"model_lines"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/oracle/gpt.json")
	require.NoError(t, err, "the gpt golden (regenerate with `make oracle`)")
	var g golden
	require.NoError(t, json.Unmarshal(raw, &g))
	require.Len(t, g.Losses, g.Steps)
	return g
}

// TestTrainMatchesJAX trains Tiny for 50 steps on a 2x4 mesh and compares the loss before
// each step with the JAX twin's: equal to 1e-5 relative. With -v it prints the curve.
func TestTrainMatchesJAX(t *testing.T) {
	g := loadGolden(t)
	c := pjrttest.Client(t)
	before := pjrt.LiveBuffers()
	m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "data", "model")
	require.NoError(t, err)
	_, vocab := gpt.Tokens(gpt.Text)
	require.Equal(t, g.Vocab, vocab)
	losses, err := gpt.Tiny.Train(c, m, gpt.Text)
	require.NoError(t, err)
	require.Len(t, losses, g.Steps)
	worst := 0.0
	for i, l := range losses {
		rel := math.Abs(float64(l)-g.Losses[i]) / math.Abs(g.Losses[i])
		worst = max(worst, rel)
		assert.LessOrEqual(t, rel, 1e-5, "step %d: xlamesh %v, jax %v", i, l, g.Losses[i])
		if i%5 == 0 || i == len(losses)-1 {
			t.Logf("step %2d  loss %.6f  (jax %.6f)", i, l, g.Losses[i])
		}
	}
	t.Logf("worst relative difference from jax %s (optax %s): %.2g", g.JAXVersion, g.OptaxVersion, worst)
	assert.Less(t, losses[len(losses)-1], losses[0]*0.7, "the model learns")
	assert.Equal(t, before, pjrt.LiveBuffers(), "device buffers leaked")
}

//go:embed gpt.go
var source string

// TestModelLines: the Go model and step (gpt.go between its BEGIN and END markers, blank
// lines and comments left out) are at most 1.2 times the JAX twin's lines.
func TestModelLines(t *testing.T) {
	g := loadGolden(t)
	lines := strings.Split(source, "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch l {
		case "// BEGIN model":
			begin = i
		case "// END model":
			end = i
		}
	}
	require.True(t, begin >= 0 && end > begin, "gpt.go has its BEGIN model and END model markers")
	n := 0
	for _, l := range lines[begin+1 : end] {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "//") {
			n++
		}
	}
	t.Logf("model and step: Go %d lines, JAX %d lines (%.2fx)", n, g.ModelLines, float64(n)/float64(g.ModelLines))
	assert.LessOrEqual(t, float64(n), 1.2*float64(g.ModelLines))
}

// TestSample checks the batches against the formula the twin uses.
func TestSample(t *testing.T) {
	toks, vocab := gpt.Tokens("abcab\n")
	assert.Equal(t, []int32{1, 2, 3, 1, 2, 0}, toks)
	assert.Equal(t, 4, vocab)
	c := gpt.Config{Seq: 2, Batch: 2}
	x, y := c.Sample(toks, 1)
	// rows start at (2*1+0)*37 % 3 = 2 and (2+1)*37 % 3 = 0
	assert.Equal(t, []int32{3, 1, 1, 2}, x)
	assert.Equal(t, []int32{1, 2, 2, 3}, y)
}

// TestConfigErrors: a configuration the model or the text cannot take is an error naming the
// field, before anything is put on the devices.
func TestConfigErrors(t *testing.T) {
	c := pjrttest.Client(t)
	m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "data", "model")
	require.NoError(t, err)
	for _, tc := range []struct {
		cfg  gpt.Config
		text string
		msg  string
	}{
		{gpt.Config{Dim: 6, Layers: 1, Seq: 4, Batch: 2, Steps: 1}, gpt.Text, "gpt: Dim = 6: want a positive multiple of the 4 heads"},
		{gpt.Config{Dim: 8, Layers: -1, Seq: 4, Batch: 2, Steps: 1}, gpt.Text, "gpt: Layers = -1: want 0 or more"},
		{gpt.Config{Dim: 8, Layers: 1, Seq: 0, Batch: 2, Steps: 1}, gpt.Text, "gpt: Seq = 0, Batch = 2, Steps = 1: want Seq and Batch positive, Steps 0 or more"},
		{gpt.Config{Dim: 8, Layers: 1, Seq: 4, Batch: 2, Steps: 1}, "abcd", "gpt: the text has 4 tokens: want more than Seq + 1 = 5"},
	} {
		_, err := tc.cfg.Train(c, m, tc.text)
		assert.EqualError(t, err, tc.msg)
	}
	x, y := gpt.Tiny.Sample([]int32{1, 2}, 0)
	assert.Nil(t, x)
	assert.Nil(t, y)
}
