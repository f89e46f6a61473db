package shardy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/shardy"
)

// shardyCorpus is testdata/shardy_corpus.json: facts extracted from
// Shardy's own dialect tests by tools/shardy-corpus/generate.py (see there
// for what each field means).
type shardyCorpus struct {
	Source  string   `json:"source"`
	Commit  string   `json:"commit"`
	Printer string   `json:"printer"`
	Meshes  []string `json:"meshes"`
	Valid   []struct {
		Kind      string `json:"kind"`
		Text      string `json:"text"`
		Where     string `json:"where"`
		Meshes    []int  `json:"meshes"`
		Print     string `json:"print"`
		Canonical bool   `json:"canonical"`
		PrintedBy string `json:"printed_by"`
	} `json:"valid"`
	Invalid []struct {
		Kind   string `json:"kind"`
		Text   string `json:"text"`
		Where  string `json:"where"`
		Error  string `json:"error"`
		Meshes []int  `json:"meshes"`
		Rank   *int   `json:"rank"`
		Values *int   `json:"values"`
	} `json:"invalid"`
	OpLevel []struct {
		Error string `json:"error"`
		Where string `json:"where"`
	} `json:"op_level"`
}

// shardyCommit is the Shardy commit package shardy follows (doc.go says so);
// the corpus must come from it.
const shardyCommit = "a0277a83e7f84d40075be0d71a131cb71d806ff6"

func loadShardyCorpus(t *testing.T) shardyCorpus {
	t.Helper()
	b, err := os.ReadFile("testdata/shardy_corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c shardyCorpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Commit != shardyCommit {
		t.Fatalf("corpus is from Shardy %s, the package follows %s (update doc.go and shardyCommit together)", c.Commit, shardyCommit)
	}
	if len(c.Valid) < 2000 || len(c.Invalid) < 60 {
		t.Fatalf("corpus too small: %d valid, %d invalid attributes", len(c.Valid), len(c.Invalid))
	}
	return c
}

// corpusAttr is one parsed attribute of the corpus: its printing, and its
// validation against the mesh ops and the tensor ranks of its test.
type corpusAttr struct {
	printed  string
	validate func(meshes []shardy.MeshOp, ranks []int) error
}

// parseCorpusAttr parses text as the kind of attribute the corpus says it is.
func parseCorpusAttr(kind, text string) (corpusAttr, error) {
	rank := func(ranks []int) int {
		if len(ranks) == 1 {
			return ranks[0]
		}
		return -1
	}
	switch kind {
	case "mesh_op":
		op, err := shardy.ParseMeshOp(text)
		return corpusAttr{op.String(), func([]shardy.MeshOp, []int) error { return shardy.ValidateMeshOps([]shardy.MeshOp{op}) }}, err
	case "sharding":
		s, err := shardy.ParseTensorSharding(text)
		printed := s.Stripped()
		if strings.HasPrefix(text, "#") {
			printed = s.String()
		}
		return corpusAttr{printed, func(m []shardy.MeshOp, r []int) error { return s.ValidateIn(m, rank(r)) }}, err
	case "per_value":
		p, err := shardy.ParseTensorShardingPerValue(text)
		return corpusAttr{p.String(), func(m []shardy.MeshOp, r []int) error { return p.ValidateIn(m, r) }}, err
	case "list":
		list, err := shardy.ParseShardingList(text)
		var b strings.Builder
		b.WriteByte('[')
		for i, s := range list {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s.Stripped())
		}
		b.WriteByte(']')
		p := shardy.NewTensorShardingPerValue(list...)
		return corpusAttr{b.String(), func(m []shardy.MeshOp, r []int) error { return p.ValidateIn(m, r) }}, err
	case "manual_axes":
		a, err := shardy.ParseManualAxes(text)
		return corpusAttr{a.String(), func(m []shardy.MeshOp, _ []int) error {
			if len(m) != 1 {
				return nil // no single mesh to check the names against
			}
			return a.Validate(m[0].Mesh())
		}}, err
	}
	return corpusAttr{}, fmt.Errorf("corpus kind %q unknown", kind)
}

func corpusMeshes(t *testing.T, c shardyCorpus, idx []int) []shardy.MeshOp {
	t.Helper()
	var ops []shardy.MeshOp
	for _, i := range idx {
		op, err := shardy.ParseMeshOp(c.Meshes[i])
		if err != nil {
			t.Fatalf("corpus mesh %q: %v", c.Meshes[i], err)
		}
		ops = append(ops, op)
	}
	return ops
}

// TestShardyCorpusValid: every attribute of Shardy's tests that Shardy
// accepts parses, prints as Shardy prints it, prints to text that parses
// back to the same text, and validates against the mesh ops of its test.
func TestShardyCorpusValid(t *testing.T) {
	c := loadShardyCorpus(t)
	printed := 0
	for _, v := range c.Valid {
		a, err := parseCorpusAttr(v.Kind, v.Text)
		if err != nil {
			t.Errorf("%s: %s %s: %v", v.Where, v.Kind, v.Text, err)
			continue
		}
		want := v.Print
		if v.Canonical {
			want = v.Text
		}
		if want != "" {
			printed++
			if a.printed != want {
				t.Errorf("%s: %s\n  prints %s\n  Shardy %s", v.Where, v.Text, a.printed, want)
			}
		}
		again, err := parseCorpusAttr(v.Kind, a.printed)
		if err != nil || again.printed != a.printed {
			t.Errorf("%s: %s: printed %s does not parse back to itself: %v %s", v.Where, v.Text, a.printed, err, again.printed)
		}
		if v.Meshes == nil && v.Kind != "mesh_op" {
			continue // an attribute without a mesh op in its test (manual axes)
		}
		if err := a.validate(corpusMeshes(t, c, v.Meshes), nil); err != nil {
			t.Errorf("%s: %s: Shardy accepts it; Validate: %v", v.Where, v.Text, err)
		}
	}
	// Every attribute some test shows printed, or that jaxlib's Shardy
	// printed; the rest use syntax newer than that jaxlib.
	if printed < len(c.Valid)-20 {
		t.Errorf("only %d of %d valid attributes have Shardy's printing", printed, len(c.Valid))
	}
}

// corpusKinds maps the start of Shardy's messages to the sentinel the
// xlamesh error must wrap.
var corpusKinds = []struct {
	phrase string
	kind   error
}{
	{"expect", shardy.ErrSyntax}, // parse errors: "expected '='", "expecting integer priority", ...
	{"priorities with leading zeros", shardy.ErrSyntax},
	{"axis size must be at least 1", shardy.ErrAxisSize},
	{"duplicate axis name", shardy.ErrDuplicateAxisName},
	{"device id must be non-negative", shardy.ErrDeviceIDs},
	{"axes is empty and device_ids", shardy.ErrDeviceIDs},
	{"total product of axis sizes", shardy.ErrDeviceIDs},
	{"sorted device ids must be iota", shardy.ErrDeviceIDs},
	{"sharding doesn't match tensor rank", shardy.ErrRank},
	{"unknown mesh", shardy.ErrUnknownMesh},
	{"unknown axis name", shardy.ErrUnknownAxis},
	{"unknown manual axis", shardy.ErrUnknownAxis},
	{"duplicate axis ref", shardy.ErrDuplicateAxisRef},
	{"replicated axes are not ordered", shardy.ErrUnordered},
	{"unreduced axes are not ordered", shardy.ErrUnordered},
	{"dim ", shardy.ErrPriority}, // "dim 1 is empty and closed but has a priority"
	{"both sub-axis and full-axis", shardy.ErrSubAxis},
	{"two consecutive sub-axes", shardy.ErrSubAxis},
	{"sub-axis", shardy.ErrSubAxis},
	{"overlapping sub-axes", shardy.ErrSubAxis},
	{"a maximal sharding", shardy.ErrMaximal},
	{"shardings don't match number of values", shardy.ErrCount},
}

// TestShardyCorpusInvalid: every attribute-level error of Shardy's tests is
// an error here too, of the matching kind, with Shardy's key phrase.
func TestShardyCorpusInvalid(t *testing.T) {
	c := loadShardyCorpus(t)
	for _, v := range c.Invalid {
		i := slices.IndexFunc(corpusKinds, func(k struct {
			phrase string
			kind   error
		}) bool {
			return strings.HasPrefix(v.Error, k.phrase)
		})
		if i < 0 {
			t.Errorf("%s: no sentinel for Shardy's %q", v.Where, v.Error)
			continue
		}
		kind := corpusKinds[i].kind
		a, err := parseCorpusAttr(v.Kind, v.Text)
		if err == nil {
			var ranks []int
			if v.Values != nil {
				ranks = slices.Repeat([]int{-1}, *v.Values)
			}
			if v.Rank != nil {
				ranks = []int{*v.Rank}
			}
			err = a.validate(corpusMeshes(t, c, v.Meshes), ranks)
		}
		switch {
		case err == nil:
			t.Errorf("%s: %s %s: Shardy rejects it (%q); xlamesh accepts it", v.Where, v.Kind, v.Text, v.Error)
		case !strings.Contains(err.Error(), v.Error):
			t.Errorf("%s: %s\n  xlamesh %v\n  Shardy  %s", v.Where, v.Text, err, v.Error)
		case !errors.Is(err, kind):
			t.Errorf("%s: %s: %v does not wrap %v", v.Where, v.Text, err, kind)
		}
	}
}
