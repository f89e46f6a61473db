package oracletest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/mlir"
)

// moduleInfo is the structure of a lowered module that the oracle compares
// (see the normalisation section of docs/jax-compat.md).
type moduleInfo struct {
	NumPartitions string
	NumReplicas   string
	Meshes        []string // `@mesh = <["x"=4, "y"=2]>`
	Args          []string // `tensor<8x2xf32> #sdy.sharding<@mesh, [{"x"}, {"y"}]>`
	Results       []string
	Constraints   []string // `<@mesh, [{}, {"y"}]> : tensor<8x2xf32>`
	Manual        []string // `in=[...] out=[...] manual_axes={...} body=(tensor<2x2xf32>)`
	Ops           []string // op names in @main, in order, nested regions included
}

var (
	reLoc          = regexp.MustCompile(`\s*loc\((?:[^()]|\([^()]*\))*\)`)
	reLocLine      = regexp.MustCompile(`(?m)^#loc.*\n?`)
	reDropAttr     = regexp.MustCompile(`(jax\.result_info|mhlo\.layout_mode) = "[^"]*"(, )?`)
	reEmptyAttrs   = regexp.MustCompile(`(>) \{\}`)
	reTrailComma   = regexp.MustCompile(`, \}`)
	reModuleName   = regexp.MustCompile(`(?m)^module @[\w.$-]+`)
	reNumParts     = regexp.MustCompile(`mhlo\.num_partitions = (\d+)`)
	reNumReps      = regexp.MustCompile(`mhlo\.num_replicas = (\d+)`)
	reMesh         = regexp.MustCompile(`(?m)^\s*sdy\.mesh (@[\w.$-]+) = (.*?)\s*$`)
	reOp           = regexp.MustCompile(`^\s*(?:%[\w#:.-]+(?:\s*,\s*%[\w#:.-]+)*\s*=\s*)?"?([a-z_][\w]*\.[\w.]+|return|call)\b`)
	reConstraint   = regexp.MustCompile(`sdy\.sharding_constraint %[\w#:.-]+ (<.*>) : (tensor<[^>]*>)`)
	reManual       = regexp.MustCompile(`sdy\.manual_computation\(([^)]*)\) in_shardings=(\[.*?\]) out_shardings=(\[.*?\]) manual_axes=(\{[^}]*\}) \(([^)]*)\)`)
	reRegionArg    = regexp.MustCompile(`%[\w#.-]+: `)
	reApplies      = regexp.MustCompile(` applies ([a-z_]+\.[\w.]+)`)
	rePrivate      = regexp.MustCompile(`func\.func private @([\w.$-]+)\(`)
	reCall         = regexp.MustCompile(`^\s*(?:%[\w#:.-]+(?:\s*,\s*%[\w#:.-]+)*\s*=\s*)?(?:func\.)?call @([\w.$-]+)\(`)
	reCustomCall   = regexp.MustCompile(`stablehlo\.custom_call"?\s*@([\w.$-]+)`)
	reMHLOSharding = regexp.MustCompile(`mhlo\.sharding = "([^"]*)"`)
)

// normalizeModule drops what the oracle does not compare: locations,
// jax.result_info and mhlo.layout_mode attributes, and the module's name.
func normalizeModule(text string) string {
	text = reLocLine.ReplaceAllString(text, "")
	text = reLoc.ReplaceAllString(text, "")
	text = reDropAttr.ReplaceAllString(text, "")
	text = reTrailComma.ReplaceAllString(text, "}")
	text = reEmptyAttrs.ReplaceAllString(text, "$1")
	text = reModuleName.ReplaceAllString(text, "module")
	return strings.TrimSpace(text) + "\n"
}

// parseModule extracts a moduleInfo from (normalised) StableHLO text.
func parseModule(text string) (moduleInfo, error) {
	text = normalizeModule(text)
	var mi moduleInfo
	if m := reNumParts.FindStringSubmatch(text); m != nil {
		mi.NumPartitions = m[1]
	}
	if m := reNumReps.FindStringSubmatch(text); m != nil {
		mi.NumReplicas = m[1]
	}
	for _, m := range reMesh.FindAllStringSubmatch(text, -1) {
		mi.Meshes = append(mi.Meshes, m[1]+" = "+m[2])
	}
	start := strings.Index(text, "@main(")
	if start < 0 {
		return mi, fmt.Errorf("no @main")
	}
	rest := text[start+len("@main"):]
	args, n, err := balanced(rest, '(', ')')
	if err != nil {
		return mi, fmt.Errorf("@main arguments: %v", err)
	}
	for _, a := range splitTop(args) {
		mi.Args = append(mi.Args, valueSig(a))
	}
	rest = strings.TrimSpace(rest[n:])
	if !strings.HasPrefix(rest, "->") {
		return mi, fmt.Errorf("@main: no results")
	}
	rest = strings.TrimSpace(rest[2:])
	var results []string
	if strings.HasPrefix(rest, "(") {
		res, n, err := balanced(rest, '(', ')')
		if err != nil {
			return mi, fmt.Errorf("@main results: %v", err)
		}
		results = splitTop(res)
		rest = rest[n:]
	} else {
		end := strings.Index(rest, " {\n")
		if end < 0 {
			return mi, fmt.Errorf("@main: no body")
		}
		results = []string{rest[:end]}
		rest = rest[end:]
	}
	for _, r := range results {
		mi.Results = append(mi.Results, valueSig(r))
	}
	body := rest[strings.Index(rest, "{")+1:]
	private := map[string]bodyInfo{}
	for _, m := range rePrivate.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		open := strings.Index(text[m[1]:], " {\n")
		if open < 0 {
			return mi, fmt.Errorf("@%s: no body", name)
		}
		private[name] = scanBody(text[m[1]+open+3:], nil)
	}
	b := scanBody(body, private)
	mi.Ops, mi.Constraints, mi.Manual = b.ops, b.constraints, b.manual
	return mi, nil
}

// bodyInfo is what scanBody finds in one function body.
type bodyInfo struct{ ops, constraints, manual []string }

// scanBody reads a function body (from just after its opening brace) up to
// its closing brace. A call to a private function in private is replaced by
// that function's body without its return (a GSPMD shard_map calls its body,
// @shmap_body, in JAX and xlamesh alike).
func scanBody(body string, private map[string]bodyInfo) bodyInfo {
	var bi bodyInfo
	depth := 1
	for _, line := range strings.Split(body, "\n") {
		if depth <= 0 {
			break
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if m := reCall.FindStringSubmatch(line); m != nil {
			if callee, ok := private[m[1]]; ok {
				ops := callee.ops
				if n := len(ops); n > 0 && ops[n-1] == "func.return" {
					ops = ops[:n-1]
				}
				bi.ops = append(bi.ops, ops...)
				bi.constraints = append(bi.constraints, callee.constraints...)
				bi.manual = append(bi.manual, callee.manual...)
				continue
			}
		}
		if m := reOp.FindStringSubmatch(line); m != nil {
			name := m[1]
			switch name {
			case "return":
				name = "func.return"
			case "call":
				name = "func.call"
			}
			if t := reCustomCall.FindStringSubmatch(line); t != nil {
				name += " @" + t[1]
				c := "@" + t[1]
				if sh := reMHLOSharding.FindStringSubmatch(line); sh != nil {
					c += " " + sh[1]
				}
				bi.constraints = append(bi.constraints, c)
			}
			bi.ops = append(bi.ops, name)
			// The compact `stablehlo.reduce(...) applies stablehlo.add` has the
			// region {add; return} implicitly; spell it as the generic form does.
			if m := reApplies.FindStringSubmatch(line); m != nil {
				bi.ops = append(bi.ops, m[1], "stablehlo.return")
			}
		}
		if m := reConstraint.FindStringSubmatch(line); m != nil {
			bi.constraints = append(bi.constraints, m[1]+" : "+m[2])
		}
		if m := reManual.FindStringSubmatch(line); m != nil {
			body := reRegionArg.ReplaceAllString(m[5], "")
			bi.manual = append(bi.manual, fmt.Sprintf("in=%s out=%s manual_axes=%s body=(%s)", m[2], m[3], m[4], body))
		}
	}
	return bi
}

// valueSig turns `%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<...>}` or
// `tensor<8xf32> {...}` into `tensor<8xf32> #sdy.sharding<...>`.
func valueSig(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ": "); strings.HasPrefix(s, "%") && i >= 0 {
		s = s[i+2:]
	}
	typ := s
	if i := strings.Index(s, " {"); i >= 0 {
		typ = s[:i]
	}
	sig := strings.TrimSpace(typ)
	if m := reMHLOSharding.FindStringSubmatch(s); m != nil {
		sig += " mhlo.sharding=" + m[1]
	}
	if i := strings.Index(s, "#sdy.sharding<"); i >= 0 {
		sh, n, err := balanced(s[i+len("#sdy.sharding"):], '<', '>')
		if err == nil {
			_ = n
			sig += " #sdy.sharding<" + sh + ">"
		}
	}
	return sig
}

// balanced returns the text inside the bracket pair s starts with, and the
// length consumed including both brackets, read with the MLIR scanner (so
// strings, comments and "->" never count as brackets).
func balanced(s string, open, close byte) (string, int, error) {
	if len(s) == 0 || s[0] != open {
		return "", 0, fmt.Errorf("expected %q", open)
	}
	sc := mlir.NewScanner(s)
	for t := sc.Next(); t.Kind != mlir.EOF; t = sc.Next() {
		if sc.Depth() == 0 {
			if t.Text != string(close) {
				return "", 0, fmt.Errorf("%q closed by %q", open, t.Text)
			}
			return s[1:t.Off], t.End(), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, err
	}
	return "", 0, fmt.Errorf("unbalanced %q", open)
}

// splitTop splits s at commas outside brackets and strings, read with the
// MLIR scanner.
func splitTop(s string) []string {
	var out []string
	sc := mlir.NewScanner(s)
	start := 0
	for t := sc.Next(); t.Kind != mlir.EOF; t = sc.Next() {
		if sc.Depth() == 0 && t.Is(mlir.Punct, ",") {
			out = append(out, strings.TrimSpace(s[start:t.Off]))
			start = t.End()
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// splatOps folds a scalar constant followed by its broadcast_in_dim (JAX's
// spelling of a splat) into one stablehlo.constant, xlamesh's spelling of the
// same value (`dense<2.0> : tensor<8x2xf32>`).
func splatOps(ops []string) []string {
	var out []string
	for i, o := range ops {
		if o == "stablehlo.broadcast_in_dim" && i > 0 && ops[i-1] == "stablehlo.constant" {
			continue
		}
		out = append(out, o)
	}
	return out
}

// diffModules lists how got's structure differs from want's.
func diffModules(want, got moduleInfo) []string {
	var d []string
	cmp := func(what string, w, g []string) {
		if !slices.Equal(w, g) {
			d = append(d, fmt.Sprintf("%s: JAX %q, xlamesh %q", what, w, g))
		}
	}
	if want.NumPartitions != got.NumPartitions {
		d = append(d, fmt.Sprintf("num_partitions: JAX %s, xlamesh %s", want.NumPartitions, got.NumPartitions))
	}
	if want.NumReplicas != got.NumReplicas {
		d = append(d, fmt.Sprintf("num_replicas: JAX %s, xlamesh %s", want.NumReplicas, got.NumReplicas))
	}
	cmp("meshes", want.Meshes, got.Meshes)
	cmp("@main arguments", want.Args, got.Args)
	cmp("@main results", want.Results, got.Results)
	cmp("sharding constraints", want.Constraints, got.Constraints)
	cmp("manual computations", want.Manual, got.Manual)
	cmp("op sequence", splatOps(want.Ops), splatOps(got.Ops))
	return d
}

// TestParseJAXModules checks the normaliser on every lowered golden: each
// parses, and the structure of two of them is spelled out exactly.
func TestParseJAXModules(t *testing.T) {
	g := loadGolden[loweringCase](t, "lowering")
	infos := map[string]moduleInfo{}
	for _, c := range g.Cases {
		if c.ExpectError {
			continue
		}
		mi, err := parseModule(c.JAX.StableHLO)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		wantMeshes := 1
		switch {
		case c.Partitioner == "gspmd":
			wantMeshes = 0
		case strings.Contains(c.JAX.StableHLO, "#stablehlo.replica_group_mesh_axes<"):
			wantMeshes = 2 // JAX 0.12 lifts the collectives' mesh into @mesh_0
		}
		if len(mi.Args) != len(c.Args) || len(mi.Results) != 1 || len(mi.Meshes) != wantMeshes {
			t.Errorf("%s: parsed %d args, %d results, %d meshes", c.Name, len(mi.Args), len(mi.Results), len(mi.Meshes))
		}
		if n := normalizeModule(c.JAX.StableHLO); strings.Contains(n, "result_info") || strings.Contains(n, "@jit_") {
			t.Errorf("%s: normalised text keeps dropped parts:\n%s", c.Name, n)
		}
		infos[c.Name] = mi
	}
	want := map[string]moduleInfo{
		"wsc_mid": {
			NumPartitions: "8", NumReplicas: "1",
			Meshes:      []string{`@mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}`},
			Args:        []string{`tensor<8x2xf32> #sdy.sharding<@mesh, [{"x"}, {}]>`},
			Results:     []string{`tensor<8x2xf32> #sdy.sharding<@mesh, [{}, {}]>`},
			Constraints: []string{`<@mesh, [{}, {"y"}]> : tensor<8x2xf32>`},
			Ops: []string{"stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.multiply",
				"sdy.sharding_constraint", "stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.add", "func.return"},
		},
		"shard_map_psum": {
			NumPartitions: "8", NumReplicas: "1",
			Meshes:  []string{`@mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}`, `@mesh_0 = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}`},
			Args:    []string{`tensor<8x2xf32> #sdy.sharding<@mesh, [{"x"}, {}]>`},
			Results: []string{`tensor<2x2xf32> #sdy.sharding<@mesh, [{}, {}]>`},
			Manual:  []string{`in=[<@mesh, [{"x"}, {}]>] out=[<@mesh, [{}, {}]>] manual_axes={"x", "y"} body=(tensor<2x2xf32>)`},
			Ops: []string{"sdy.manual_computation", "stablehlo.all_reduce", "stablehlo.add", "stablehlo.return",
				"sdy.return", "func.return"},
		},
	}
	want["gspmd_shard_map_psum"] = moduleInfo{
		NumPartitions: "8", NumReplicas: "1",
		Args:    []string{`tensor<8x2xf32> mhlo.sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}`},
		Results: []string{`tensor<2x2xf32> mhlo.sharding={replicated}`},
		Constraints: []string{"@Sharding {devices=[4,1,2]<=[8] last_tile_dim_replicate}", "@SPMDFullToShardShape {manual}",
			"@Sharding {manual}", "@SPMDShardToFullShape {replicated}"},
		Ops: []string{"stablehlo.custom_call @Sharding", "stablehlo.custom_call @SPMDFullToShardShape",
			"stablehlo.all_reduce", "stablehlo.add", "stablehlo.return",
			"stablehlo.custom_call @Sharding", "stablehlo.custom_call @SPMDShardToFullShape", "func.return"},
	}
	for name, w := range want {
		if d := diffModules(w, infos[name]); len(d) > 0 {
			t.Errorf("%s: parse of JAX's module:\n  %s", name, strings.Join(d, "\n  "))
		}
	}
}
