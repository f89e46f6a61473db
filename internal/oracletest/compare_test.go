package oracletest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
)

// The comparators are the oracle's own guard: if one stopped reporting
// differences, every case would pass. These tests plant differences and
// require each to be reported, exactly.

func TestEq(t *testing.T) {
	var d []string
	eq(&d, "ids", []int{1, 2}, []int{1, 2})
	eq(&d, "ids", nil, []int{})
	eq1(&d, "size", 8, 8)
	eq1(&d, "text", "P('x')", "P('x')")
	if len(d) != 0 {
		t.Fatalf("equal values reported: %q", d)
	}
	eq(&d, "ids", []int{1, 2}, []int{2, 1})
	eq(&d, "names", []string{"x"}, []string{"x", "y"})
	eq1(&d, "size", 8, 4)
	eq1(&d, "replicated", true, false)
	want := []string{"ids: JAX [1 2], xlamesh [2 1]", "names: JAX [x], xlamesh [x y]", "size: JAX 8, xlamesh 4",
		"replicated: JAX true, xlamesh false"}
	if !slices.Equal(d, want) {
		t.Fatalf("diffs = %q, want %q", d, want)
	}
}

func TestErrDiffs(t *testing.T) {
	head := caseHead{Kind: "unknown_axis", Phrases: []string{"Resource axis", "not found"}}
	je := &jaxError{Class: "ValueError", Message: "Resource axis: w of P('w',) is not found in mesh: ('x',)."}
	good := fmt.Errorf("mesh: spec P('w'), dim 0: %w: Resource axis: w is not found", mesh.ErrUnknownAxis)
	tests := []struct {
		name string
		head caseHead
		je   *jaxError
		err  error
		want []string // prefixes of the diffs, in order
	}{
		{"agrees", head, je, good, nil},
		{"no JAX error in the golden", head, nil, good, []string{"golden has no JAX error for an error case"}},
		{"xlamesh succeeds", head, je, nil, []string{`JAX raises ValueError("Resource axis: w of`}},
		{"wrong kind", head, je, errors.New("Resource axis: w not found"), []string{"error kind: want wrapping unknown mesh axis"}},
		{"phrase missing", head, je, fmt.Errorf("mesh: %w", mesh.ErrUnknownAxis), []string{`message lacks ["Resource axis" "not found"]`}},
		{"one phrase missing", head, je, fmt.Errorf("mesh: %w: Resource axis w", mesh.ErrUnknownAxis), []string{`message lacks ["not found"]`}},
		{"both wrong", head, je, errors.New("nope"), []string{"error kind:", "message lacks"}},
		{"unknown corpus kind", caseHead{Kind: "nope"}, je, good, []string{`corpus kind "nope" has no sentinel`}},
	}
	for _, tt := range tests {
		d := errDiffs(tt.head, tt.je, tt.err)
		if len(d) != len(tt.want) {
			t.Errorf("%s: diffs %q, want %d starting %q", tt.name, d, len(tt.want), tt.want)
			continue
		}
		for i := range d {
			if !strings.HasPrefix(d[i], tt.want[i]) {
				t.Errorf("%s: diff %q, want it to start %q", tt.name, d[i], tt.want[i])
			}
		}
	}
}

func TestOkDiffs(t *testing.T) {
	if d := okDiffs(struct{ A int }{1}, nil); d != nil {
		t.Errorf("no error: %q", d)
	}
	d := okDiffs(struct {
		A string `json:"a"`
	}{"<=[8]"}, errors.New("boom"))
	if want := []string{`JAX succeeds with {"a":"<=[8]"}; xlamesh: boom`}; !slices.Equal(d, want) {
		t.Errorf("diffs %q, want %q", d, want)
	}
}

func TestDiffModules(t *testing.T) {
	base := moduleInfo{
		NumPartitions: "8", NumReplicas: "1",
		Meshes:      []string{`@mesh = <["x"=4, "y"=2]>`},
		Args:        []string{`tensor<8x2xf32> #sdy.sharding<@mesh, [{"x"}, {}]>`},
		Results:     []string{`tensor<8x2xf32> #sdy.sharding<@mesh, [{}, {}]>`},
		Constraints: []string{`<@mesh, [{}, {"y"}]> : tensor<8x2xf32>`},
		Manual:      []string{`in=[] out=[] manual_axes={} body=()`},
		Ops:         []string{"stablehlo.multiply", "func.return"},
	}
	clone := func() moduleInfo {
		m := base
		m.Meshes, m.Args, m.Results = slices.Clone(m.Meshes), slices.Clone(m.Args), slices.Clone(m.Results)
		m.Constraints, m.Manual, m.Ops = slices.Clone(m.Constraints), slices.Clone(m.Manual), slices.Clone(m.Ops)
		return m
	}
	if d := diffModules(base, clone()); d != nil {
		t.Fatalf("equal modules: %q", d)
	}
	plants := []struct {
		what  string
		plant func(m *moduleInfo)
	}{
		{"num_partitions: JAX 8, xlamesh 4", func(m *moduleInfo) { m.NumPartitions = "4" }},
		{"num_replicas: JAX 1, xlamesh 2", func(m *moduleInfo) { m.NumReplicas = "2" }},
		{"meshes:", func(m *moduleInfo) { m.Meshes[0] = `@mesh = <["x"=2, "y"=4]>` }},
		{"@main arguments:", func(m *moduleInfo) { m.Args[0] = `tensor<8x2xf32> #sdy.sharding<@mesh, [{}, {"x"}]>` }},
		{"@main results:", func(m *moduleInfo) { m.Results = nil }},
		{"sharding constraints:", func(m *moduleInfo) { m.Constraints = append(m.Constraints, m.Constraints[0]) }},
		{"manual computations:", func(m *moduleInfo) { m.Manual[0] = `in=[] out=[] manual_axes={"x"} body=()` }},
		{"op sequence:", func(m *moduleInfo) { m.Ops[0] = "stablehlo.add" }},
	}
	for _, p := range plants {
		got := clone()
		p.plant(&got)
		if d := diffModules(base, got); len(d) != 1 || !strings.HasPrefix(d[0], p.what) {
			t.Errorf("planted %q: diffs %q", p.what, d)
		}
	}
	// A JAX splat (constant + broadcast_in_dim) is one constant; anything else is a difference.
	got := clone()
	base.Ops = []string{"stablehlo.constant", "stablehlo.broadcast_in_dim", "func.return"}
	got.Ops = []string{"stablehlo.constant", "func.return"}
	if d := diffModules(base, got); d != nil {
		t.Errorf("splat: %q", d)
	}
	got.Ops = []string{"stablehlo.broadcast_in_dim", "func.return"}
	if d := diffModules(base, got); len(d) != 1 {
		t.Errorf("a missing constant: %q", d)
	}
}

// fakeT records what collector.check reports.
type fakeT struct{ errors, logs []string }

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// TestCheck: a known difference passes only when it is exactly the listed
// one; a change on either side, an unlisted difference, or a known one that
// went away fails.
func TestCheck(t *testing.T) {
	const group, name = "mesh", "jax_accepts_duplicate_devices"
	k, ok := known[group+"/"+name]
	if !ok || len(k.diffs) == 0 {
		t.Fatalf("known_test.go has no diffs for %s/%s", group, name)
	}
	changedJAX := []string{strings.Replace(k.diffs[0], `"size":4`, `"size":5`, 1)}
	changedXlamesh := []string{k.diffs[0] + "!"}
	if changedJAX[0] == k.diffs[0] {
		t.Fatalf("cannot plant a JAX change in %q", k.diffs[0])
	}
	tests := []struct {
		name, group, caseName string
		diffs                 []string
		fails                 bool
		status                string
	}{
		{"agreement", group, "other", nil, false, statusPass},
		{"unlisted difference", group, "other", []string{"size: JAX 8, xlamesh 4"}, true, statusFail},
		{"the known difference", group, name, k.diffs, false, k.status},
		{"known, JAX's value changed", group, name, changedJAX, true, statusFail},
		{"known, xlamesh's value changed", group, name, changedXlamesh, true, statusFail},
		{"known, one more difference", group, name, append(slices.Clone(k.diffs), "size: JAX 8, xlamesh 4"), true, statusFail},
		{"known, but agrees now", group, name, nil, true, statusFail},
	}
	for _, tt := range tests {
		c := &collector{groupNotes: map[string]string{}} // not the report's
		f := &fakeT{}
		c.check(f, tt.group, tt.caseName, tt.diffs)
		if failed := len(f.errors) > 0; failed != tt.fails {
			t.Errorf("%s: failed = %v (%q), want %v", tt.name, failed, f.errors, tt.fails)
		}
		if len(c.outcomes) != 1 || c.outcomes[0].status != tt.status {
			t.Errorf("%s: outcomes %+v, want status %s", tt.name, c.outcomes, tt.status)
		}
	}
}

// TestPlantedDifferences runs the groups' own comparisons on real goldens:
// each agrees on the golden as it is, and reports a difference planted in
// JAX's answer.
func TestPlantedDifferences(t *testing.T) {
	t.Run("mesh", func(t *testing.T) {
		g := loadGolden[meshCase](t, "mesh")
		i := slices.IndexFunc(g.Cases, func(c meshCase) bool { return !c.ExpectError && known["mesh/"+c.Name].why == "" })
		c := g.Cases[i]
		m, err := buildMesh(c.Mesh)
		if err != nil {
			t.Fatal(err)
		}
		if d := compareMesh(c.JAX, m, true); d != nil {
			t.Fatalf("%s: %q", c.Name, d)
		}
		plants := map[string]func(p *meshProps){
			"axis names": func(p *meshProps) { p.AxisNames = append(slices.Clone(p.AxisNames), "z") },
			"axis sizes": func(p *meshProps) { p.AxisSizes = append([]int{p.AxisSizes[0] + 1}, p.AxisSizes[1:]...) },
			"axis types": func(p *meshProps) { p.AxisTypes = nil },
			"size":       func(p *meshProps) { p.Size++ },
			"device ids": func(p *meshProps) { p.DeviceIDs = append([]int{99}, p.DeviceIDs[1:]...) },
			"String":     func(p *meshProps) { p.Str += " " },
		}
		for what, plant := range plants {
			p := c.JAX
			plant(&p)
			if d := compareMesh(p, m, true); len(d) != 1 || !strings.HasPrefix(d[0], what+":") {
				t.Errorf("planted %s: %q", what, d)
			}
		}
	})
	t.Run("sharding", func(t *testing.T) {
		g := loadGolden[shardingCase](t, "sharding")
		i := slices.IndexFunc(g.Cases, func(c shardingCase) bool {
			return !c.ExpectError && known["sharding/"+c.Name].why == "" && len(c.JAX.Devices) == 8 && !c.JAX.IsFullyReplicated
		})
		c := g.Cases[i]
		m, err := buildMesh(c.Mesh)
		if err != nil {
			t.Fatal(err)
		}
		s, err := shardingErr(m, c)
		if err != nil {
			t.Fatal(err)
		}
		if d := compareGeometry(c, m, s); d != nil {
			t.Fatalf("%s: %q", c.Name, d)
		}
		plants := map[string]func(c *shardingCase){
			"spec": func(c *shardingCase) { c.JAX.SpecRepr += " " },
			"shard shape": func(c *shardingCase) {
				c.JAX.ShardShape = append([]int{c.JAX.ShardShape[0] + 1}, c.JAX.ShardShape[1:]...)
			},
			"is_fully_replicated": func(c *shardingCase) { c.JAX.IsFullyReplicated = true },
			"GSPMD text":          func(c *shardingCase) { c.JAX.HLOSharding = "{replicated}" },
			"device order":        func(c *shardingCase) { c.JAX.Devices = slices.Clone(c.JAX.Devices); c.JAX.Devices[0].ID = 99 },
			"indices": func(c *shardingCase) {
				c.JAX.Devices = slices.Clone(c.JAX.Devices)
				c.JAX.Devices[1].Index = [][]int{{0, 1}}
			},
			"replica ids": func(c *shardingCase) {
				c.JAX.Devices = slices.Clone(c.JAX.Devices)
				c.JAX.Devices[2].ReplicaID += 5
			},
		}
		for what, plant := range plants {
			p := c
			plant(&p)
			if d := compareGeometry(p, m, s); len(d) != 1 || !strings.HasPrefix(d[0], what+":") {
				t.Errorf("planted %s: %q", what, d)
			}
		}
	})
	t.Run("sharding error", func(t *testing.T) {
		g := loadGolden[shardingCase](t, "sharding")
		i := slices.IndexFunc(g.Cases, func(c shardingCase) bool { return c.ExpectError && len(c.Phrases) > 0 })
		c := g.Cases[i]
		m, err := buildMesh(c.Mesh)
		if err == nil {
			_, err = shardingErr(m, c)
		}
		if d := errDiffs(c.caseHead, c.JAX.Error, err); d != nil {
			t.Fatalf("%s: %q", c.Name, d)
		}
		h := c.caseHead
		h.Phrases = append(slices.Clone(h.Phrases), "a phrase no error has")
		if d := errDiffs(h, c.JAX.Error, err); len(d) != 1 || !strings.HasPrefix(d[0], "message lacks") {
			t.Errorf("planted phrase: %q", d)
		}
		h = c.caseHead
		h.Kind = map[string]string{"rank": "indivisible"}[h.Kind]
		if h.Kind == "" {
			h.Kind = "rank"
		}
		if d := errDiffs(h, c.JAX.Error, err); len(d) != 1 || !strings.HasPrefix(d[0], "error kind") {
			t.Errorf("planted kind %s: %q", h.Kind, d)
		}
	})
	t.Run("lowering", func(t *testing.T) {
		g := loadGolden[loweringCase](t, "lowering")
		i := slices.IndexFunc(g.Cases, func(c loweringCase) bool {
			return !c.ExpectError && known["lowering/"+c.Name].why == "" && strings.Contains(c.JAX.StableHLO, `sdy.mesh @mesh = <["x"=4, "y"=2]>`)
		})
		c := g.Cases[i]
		p, _, err := lowerCase(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseModule(p.Text())
		if err != nil {
			t.Fatal(err)
		}
		want, err := parseModule(c.JAX.StableHLO)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffModules(want, got); d != nil {
			t.Fatalf("%s: %q", c.Name, d)
		}
		planted := strings.Replace(c.JAX.StableHLO, `<["x"=4, "y"=2]>`, `<["x"=2, "y"=4]>`, 1)
		if want, err = parseModule(planted); err != nil {
			t.Fatal(err)
		}
		if d := diffModules(want, got); len(d) != 1 || !strings.HasPrefix(d[0], "meshes:") {
			t.Errorf("planted mesh: %q", d)
		}
	})
}
