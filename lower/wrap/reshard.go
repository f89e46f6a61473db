package wrap

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shardy"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// existingMode says what Module does with the shardings a module already carries.
type existingMode uint8

const (
	existingRefuse  existingMode = iota // the default: a Shardy module with meshes is an error
	existingReplace                     // ReplaceShardings
	existingKeep                        // KeepShardings
)

// ReplaceShardings makes Module replace every sharding a module already carries with the ones
// it is given, on the mesh of those shardings: the module's meshes (`sdy.mesh` symbols, or the
// xla.sdy.meshes frontend attribute) are removed and the new mesh added, @main's argument and
// result annotations (`sdy.sharding`, `mhlo.sharding`, `xla.sdy.sharding` frontend attributes)
// are replaced (or removed, for a zero NamedSharding), and the shardings inside the body
// (sharding constraints, op shardings, manual computations) are moved onto the new mesh: their
// mesh symbol is renamed, and every axis they name must be in the new mesh (an error wrapping
// ErrModule and lower.ErrUnknownAxis names the first that is not). A module with manual
// computations (shard_map) moves only to a mesh with the same axis names, in the same order, on
// which every manual axis keeps its size: the bodies' shapes are written for them
// (lower.ErrMeshMismatch otherwise). When other axes change size, the replica groups (and
// source_target_pairs) of the bodies' collectives are rewritten: each must be the groups of
// some mesh axes of the old mesh, which must keep their sizes, and becomes the groups of the
// same axes on the new mesh (lower.ErrMeshMismatch, naming the op, otherwise);
// stablehlo.partition_id is then refused. GSPMD shardings inside the body (`mhlo.sharding` on
// `@Sharding` custom calls and other ops) stay when the device count does not change and are an
// error wrapping lower.ErrMeshMismatch when it does; next to Shardy attributes they are stale
// and removed. An argument aliased to a result (tf.aliasing_output) stays donated
// (jax.buffer_donor) and XLA decides again whether to reuse its buffer: on the new mesh the two
// may be laid out differently.
func ReplaceShardings() Option { return func(c *config) { c.existing = existingReplace } }

// KeepShardings makes Module leave a module's shardings, meshes and mhlo.num_partitions as they
// are: the text is returned unchanged, and the Program reports @main's signature, the module's
// partition count and the partitioner its annotations are written for. The shardings given to
// Module must be zero (or the slices nil).
func KeepShardings() Option { return func(c *config) { c.existing = existingKeep } }

// form is how a module carries its shardings.
type form uint8

const (
	formNone      form = iota // no shardings
	formGSPMD                 // mhlo.sharding strings
	formShardy                // sdy.mesh symbols and #sdy attributes
	formRoundTrip             // Shardy attributes inside mhlo.frontend_attributes strings (xla.sdy.*)
)

type siteKind uint8

const (
	siteMeshDef     siteKind = iota + 1 // `sdy.mesh @m = <...>` at the module's top level
	siteRef                             // `<@mesh, [...]>` (or `<mesh<...>, ...>`): a sharding on a mesh
	siteManual                          // `manual_axes={...}`: the axis list
	siteSdyString                       // the string value of an xla.sdy.* attribute
	siteGSPMD                           // the string value of an mhlo.sharding attribute
	siteGroups                          // a collective's replica_groups or source_target_pairs value, with its type
	sitePartitionID                     // a stablehlo.partition_id or replica_id op name
)

// site is a place in the text a re-sharding rewrites.
type site struct {
	kind    siteKind
	at, end int    // the span rewritten
	entry   [2]int // siteGSPMD: the dictionary entry with its separating comma, to delete
	key     string // siteSdyString and siteGroups: the attribute's key
	op      string // siteGroups and sitePartitionID: the op's name
}

// existing is what a module carries of shardings besides @main's signature.
type existing struct {
	form     form
	meshes   []shardy.MeshOp // the module's meshes (symbols or xla.sdy.meshes entries)
	sites    []site
	rtMeshes [2]int // the xla.sdy.meshes string token in the module attributes, or -1
	manual   bool   // the body has manual computations
}

// scanExisting finds the shardings of text outside @main's signature attributes.
func scanExisting(text string, sig *mainSig) (*existing, error) {
	ex := &existing{rtMeshes: [2]int{-1, -1}}
	var skip [][2]int
	for _, e := range append(slices.Clone(sig.args), sig.results...) {
		if e.attrs != "" {
			skip = append(skip, [2]int{e.attrsAt, e.attrsAt + len(e.attrs)})
		}
	}
	sites, err := scanSites(text, skip, sig.moduleAttrs, true, ex)
	if err != nil {
		return nil, err
	}
	ex.sites = sites
	for _, s := range sites {
		if s.kind == siteMeshDef {
			op, err := shardy.ParseMeshOp(meshDefText(text, s))
			if err != nil {
				return nil, wrapErrorAt(text, s.at, "cannot read mesh: %w", err)
			}
			ex.meshes = append(ex.meshes, op)
		}
	}
	if ex.rtMeshes[0] >= 0 {
		ops, err := parseRoundTripMeshes(text[ex.rtMeshes[0]:ex.rtMeshes[1]])
		if err != nil {
			return nil, wrapErrorAt(text, ex.rtMeshes[0], "cannot read xla.sdy.meshes: %w", err)
		}
		ex.meshes = append(ex.meshes, ops...)
	}
	has := func(k siteKind) bool { return slices.ContainsFunc(sites, func(s site) bool { return s.kind == k }) }
	keys := sigKeys(text, sig)
	switch {
	case ex.rtMeshes[0] >= 0 || has(siteSdyString) || keys["xla.sdy.sharding"]:
		ex.form = formRoundTrip
	case has(siteMeshDef) || has(siteRef) || keys["sdy.sharding"]:
		ex.form = formShardy
	case has(siteGSPMD) || keys["mhlo.sharding"]:
		ex.form = formGSPMD
	}
	return ex, nil
}

// sigKeys returns the sharding keys used on @main's arguments and results.
func sigKeys(text string, sig *mainSig) map[string]bool {
	keys := map[string]bool{}
	for _, e := range append(slices.Clone(sig.args), sig.results...) {
		if e.attrs == "" {
			continue
		}
		parts, ks := dictEntries(text, e.attrsAt)
		for i, k := range ks {
			keys[k] = true
			if k == "mhlo.frontend_attributes" {
				if open := valueOpen(text, parts[i]); open >= 0 {
					_, inner := dictEntries(text, open)
					for _, k := range inner {
						keys[k] = true
					}
				}
			}
		}
	}
	return keys
}

// valueOpen returns the offset of the '{' opening the dictionary value of the entry part
// ("key = {...}"), or -1.
func valueOpen(text string, part [2]int) int {
	s := mlir.NewScanner(text[part[0]:part[1]])
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		if t.Is(mlir.Punct, "=") {
			if v := s.Next(); v.Is(mlir.Punct, "{") {
				return part[0] + v.Off
			}
			return -1
		}
	}
	return -1
}

// scanSites lists the sites of text outside the skip ranges. moduleAttrs is the module's
// attribute dictionary, where only xla.sdy.meshes is looked for; outer is false when text is
// the inside of a string literal.
func scanSites(text string, skip [][2]int, moduleAttrs [2]int, outer bool, ex *existing) ([]site, error) {
	s := mlir.NewScanner(text)
	var sites []site
	var prev [3]mlir.Token // the three tokens before the current one, most recent first
	op := ""               // the name of the last stablehlo op seen
	skipped := func(off int) bool {
		for _, r := range skip {
			if off >= r[0] && off < r[1] {
				return true
			}
		}
		return false
	}
	inModuleAttrs := func(off int) bool { return off > moduleAttrs[0] && off < moduleAttrs[1] }
	// closeOf reads tokens through the bracket the current token opened; it returns the end
	// of the closing token.
	closeOf := func() int {
		d := s.Depth()
		t := mlir.Token{}
		for s.Depth() >= d {
			if t = s.Next(); t.Kind == mlir.EOF {
				return len(text)
			}
		}
		return t.End()
	}
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		switch {
		case skipped(t.Off):
		case t.Kind == mlir.String && prev[0].Is(mlir.Punct, "=") && (prev[1].Kind == mlir.Ident || prev[1].Kind == mlir.String):
			key := prev[1].Text
			if prev[1].Kind == mlir.String {
				key, _ = mlir.Unquote(key)
			}
			switch {
			case inModuleAttrs(t.Off):
				if key == "xla.sdy.meshes" {
					ex.rtMeshes = [2]int{t.Off, t.End()}
				}
			case strings.HasPrefix(key, "xla.sdy."):
				sites = append(sites, site{kind: siteSdyString, at: t.Off, end: t.End(), key: key})
			case key == "mhlo.sharding":
				sites = append(sites, site{kind: siteGSPMD, at: t.Off, end: t.End(), entry: entrySpan(text, s, prev[1], prev[2], t)})
			}
		case inModuleAttrs(t.Off):
		case t.Is(mlir.Ident, "sdy.mesh") && s.Depth() == 1 && outer:
			at := t.Off
			for t = s.Next(); t.Kind != mlir.EOF && !t.Is(mlir.Punct, "<"); t = s.Next() {
			}
			end := closeOf()
			if p := s.Peek(); p.Is(mlir.Punct, "{") {
				// JAX 0.12 adds {stablehlo.mesh = {axes = [...]}}: it restates the axes, so it
				// goes with the definition it restates.
				s.Next()
				end = closeOf()
			}
			if p := s.Peek(); p.Is(mlir.Ident, "loc") {
				s.Next()
				s.Next()
				end = closeOf()
			}
			sites = append(sites, site{kind: siteMeshDef, at: at, end: end})
		case t.Is(mlir.Punct, "<"):
			p := s.Peek()
			// #stablehlo.replica_group_mesh_axes<mesh = @m, ...> names a mesh but is no sharding.
			stablehloAttr := prev[0].Kind == mlir.HashIdent && strings.HasPrefix(prev[0].Text, "#stablehlo.")
			if !stablehloAttr && (p.Kind == mlir.AtIdent || p.Is(mlir.Ident, "mesh") || p.Is(mlir.HashIdent, "#sdy.mesh")) {
				sites = append(sites, site{kind: siteRef, at: t.Off, end: closeOf()})
			}
		case t.Is(mlir.Ident, "sdy.manual_computation"):
			ex.manual = true
		case t.Kind == mlir.Ident && strings.HasPrefix(t.Text, "stablehlo.") || t.Kind == mlir.String && strings.HasPrefix(t.Text, `"stablehlo.`):
			op = strings.Trim(t.Text, `"`)
			if op == "stablehlo.partition_id" || op == "stablehlo.replica_id" {
				sites = append(sites, site{kind: sitePartitionID, at: t.Off, end: t.End(), op: op})
			}
		case (t.Is(mlir.Ident, "replica_groups") || t.Is(mlir.Ident, "source_target_pairs")) && s.Peek().Is(mlir.Punct, "=") && outer:
			s.Next()
			v := s.Next()
			if !v.Is(mlir.Ident, "dense") || !s.Peek().Is(mlir.Punct, "<") {
				t = v // JAX 0.12's #stablehlo.replica_group_mesh_axes<...>: prev[0] for its '<'
				break
			}
			s.Next()
			end := closeOf()
			if s.Peek().Is(mlir.Punct, ":") {
				s.Next()
				if s.Next().Is(mlir.Ident, "tensor") && s.Peek().Is(mlir.Punct, "<") {
					s.Next()
					end = closeOf()
				}
			}
			sites = append(sites, site{kind: siteGroups, at: v.Off, end: end, key: t.Text, op: op})
		case t.Is(mlir.Ident, "manual_axes"):
			if s.Peek().Is(mlir.Punct, "=") {
				s.Next()
			}
			if o := s.Next(); o.Is(mlir.Punct, "{") {
				ex.manual = true
				sites = append(sites, site{kind: siteManual, at: o.Off, end: closeOf()})
			}
		}
		prev[0], prev[1], prev[2] = t, prev[0], prev[1]
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("wrap: %w: %w", ErrModule, err)
	}
	return sites, nil
}

// entrySpan returns the span to delete to drop the dictionary entry key = value: with the
// comma after it, or else the comma before it.
func entrySpan(text string, s *mlir.Scanner, key, before, value mlir.Token) [2]int {
	if next := s.Peek(); next.Is(mlir.Punct, ",") {
		return [2]int{key.Off, mlir.SkipSpace(text, next.End())}
	}
	if before.Is(mlir.Punct, ",") {
		return [2]int{before.Off, value.End()}
	}
	return [2]int{key.Off, value.End()}
}

// meshDefText returns the `sdy.mesh @m = <...>` part of a mesh definition site (no location,
// no attribute dictionary such as JAX 0.12's {stablehlo.mesh = ...}).
func meshDefText(text string, s site) string {
	def := text[s.at:s.end]
	if i := strings.LastIndex(def, " loc("); i >= 0 && strings.HasSuffix(def, ")") {
		def = strings.TrimRight(def[:i], " ")
	}
	if strings.HasSuffix(def, "}") {
		if i := strings.LastIndex(def, "> {"); i >= 0 {
			def = def[:i+1]
		}
	}
	return def
}

// parseRoundTripMeshes reads the xla.sdy.meshes string: `{mesh = #sdy.mesh<["x"=4]>, ...}`.
func parseRoundTripMeshes(quoted string) ([]shardy.MeshOp, error) {
	v, err := mlir.Unquote(quoted)
	if err != nil {
		return nil, err
	}
	s := mlir.NewScanner(v)
	if !s.Next().Is(mlir.Punct, "{") {
		return nil, fmt.Errorf("%q is not a dictionary", v)
	}
	var ops []shardy.MeshOp
	for {
		k := s.Next()
		if k.Is(mlir.Punct, "}") && s.Depth() == 0 {
			return ops, s.Err()
		}
		name := k.Text
		switch k.Kind {
		case mlir.String:
			if name, err = mlir.Unquote(k.Text); err != nil {
				return nil, err
			}
		case mlir.Ident:
		default:
			return nil, fmt.Errorf("expected a mesh name, found %q", k.Text)
		}
		if !s.Next().Is(mlir.Punct, "=") {
			return nil, fmt.Errorf("expected '=' after mesh %q", name)
		}
		start := s.Peek().Off
		for t := s.Next(); !(s.Depth() == 1 && (t.Is(mlir.Punct, ">") || t.Is(mlir.Punct, "}"))); t = s.Next() {
			if t.Kind == mlir.EOF {
				return nil, fmt.Errorf("unterminated mesh %q: %v", name, s.Err())
			}
		}
		m, err := shardy.ParseMesh(v[start:s.Offset()])
		if err != nil {
			return nil, err
		}
		ops = append(ops, shardy.NewMeshOp(name, m))
		if s.Peek().Is(mlir.Punct, ",") {
			s.Next()
		}
	}
}

// wrapErrorAt returns an ErrModule error positioned at text[off].
func wrapErrorAt(text string, off int, format string, args ...any) error {
	line, col := mlir.Position(text, off)
	return fmt.Errorf("wrap: %w: %d:%d: "+format, append([]any{ErrModule, line, col}, args...)...)
}

// resharder moves the body's shardings onto the module's new mesh.
type resharder struct {
	ex     *existing
	name   string      // the new mesh symbol
	mesh   shardy.Mesh // the new mesh
	target form        // formShardy, formRoundTrip or formGSPMD: the form written
	n      int         // the new device count
}

// edits returns the edits that move the sites of text.
func (r *resharder) edits(text string) ([]edit, error) {
	regroup, err := r.manualMesh(text)
	if err != nil {
		return nil, err
	}
	var edits []edit
	for _, s := range r.ex.sites {
		switch s.kind {
		case siteMeshDef:
			end := s.end
			if rest := text[end:]; strings.HasPrefix(strings.TrimLeft(rest, " \t"), "\n") {
				end += strings.Index(rest, "\n") + 1
				if at := strings.LastIndexByte(text[:s.at], '\n'); at >= 0 && strings.TrimSpace(text[at+1:s.at]) == "" {
					s.at = at + 1
				}
			}
			edits = append(edits, edit{at: s.at, del: end - s.at})
		case siteRef, siteManual:
			if r.target == formGSPMD {
				return nil, wrapErrorAt(text, s.at, "%w: Shardy sharding %s in the body cannot be written for GSPMD; re-shard with the Shardy partitioner", lower.ErrPartitioner, text[s.at:s.end])
			}
			repl, err := r.rewrite(s, text[s.at:s.end])
			if err != nil {
				return nil, wrapErrorAt(text, s.at, "%w", err)
			}
			edits = append(edits, edit{at: s.at, del: s.end - s.at, insert: repl})
		case siteSdyString:
			if r.target != formRoundTrip {
				return nil, wrapErrorAt(text, s.at, "%w: %s = %s in the body is Shardy's round-trip form; write the module with the Shardy partitioner", lower.ErrPartitioner, s.key, text[s.at:s.end])
			}
			repl, err := r.rewriteString(text[s.at:s.end])
			if err != nil {
				return nil, wrapErrorAt(text, s.at, "%s: %w", s.key, err)
			}
			edits = append(edits, edit{at: s.at, del: s.end - s.at, insert: repl})
		case siteGroups:
			if regroup.IsEmpty() {
				continue
			}
			repl, err := regroupSite(s.op, s.key, text[s.at:s.end], regroup, r.mesh)
			if err != nil {
				return nil, wrapErrorAt(text, s.at, "%w", err)
			}
			edits = append(edits, edit{at: s.at, del: s.end - s.at, insert: repl})
		case sitePartitionID:
			if !regroup.IsEmpty() {
				return nil, wrapErrorAt(text, s.at, "%w: %s in a module with manual computations computes mesh positions from the sizes of mesh %s; it cannot move to %s", lower.ErrMeshMismatch, s.op, regroup, r.mesh)
			}
		case siteGSPMD:
			if r.ex.form == formShardy || r.ex.form == formRoundTrip {
				edits = append(edits, edit{at: s.entry[0], del: s.entry[1] - s.entry[0]}) // stale next to Shardy's
				continue
			}
			v, err := mlir.Unquote(text[s.at:s.end])
			if err != nil {
				return nil, wrapErrorAt(text, s.at, "%w", err)
			}
			if r.target != formGSPMD {
				return nil, wrapErrorAt(text, s.at, "%w: GSPMD sharding %q in the body cannot be moved onto a Shardy mesh; re-shard with the GSPMD partitioner", lower.ErrPartitioner, v)
			}
			if err := mlir.CheckSharding(v, r.n); err != nil {
				return nil, wrapErrorAt(text, s.at, "%w: GSPMD sharding %q in the body does not fit %d devices: %w", lower.ErrMeshMismatch, v, r.n, err)
			}
		}
	}
	return edits, nil
}

// rewrite moves one sharding reference or manual axis list onto the new mesh.
func (r *resharder) rewrite(s site, src string) (string, error) {
	if s.kind == siteManual {
		axes, err := shardy.ParseManualAxes(src)
		if err != nil {
			return "", err
		}
		for _, a := range axes.Names() {
			if _, ok := r.mesh.AxisSize(a); !ok {
				return "", fmt.Errorf("%w: manual axis %q is not an axis of the new mesh %s", lower.ErrUnknownAxis, a, r.mesh)
			}
		}
		return src, nil
	}
	ts, err := shardy.ParseTensorSharding(src)
	if err != nil {
		return "", err
	}
	if _, inline := ts.InlineMesh(); !inline && !slices.ContainsFunc(r.ex.meshes, func(op shardy.MeshOp) bool { return op.Name() == ts.MeshName() }) {
		return "", fmt.Errorf("sharding %s names mesh @%s, which the module does not define", src, ts.MeshName())
	}
	refs := slices.Clone(ts.Replicated())
	refs = append(refs, ts.Unreduced()...)
	for _, d := range ts.Dims() {
		refs = append(refs, d.Axes()...)
	}
	for _, a := range refs {
		if _, ok := r.mesh.AxisSize(a.Name()); !ok {
			return "", fmt.Errorf("%w: sharding %s names axis %q, which the new mesh %s lacks", lower.ErrUnknownAxis, src, a.Name(), r.mesh)
		}
	}
	moved := ts.WithMeshName(r.name)
	if err := moved.Validate(r.mesh, moved.Rank()); err != nil {
		return "", fmt.Errorf("%w: sharding %s on the new mesh %s: %w", lower.ErrSharding, src, r.mesh, err)
	}
	return moved.Stripped(), nil
}

// rewriteString moves the shardings inside an xla.sdy.* string literal.
func (r *resharder) rewriteString(quoted string) (string, error) {
	v, err := mlir.Unquote(quoted)
	if err != nil {
		return "", err
	}
	inner := &existing{rtMeshes: [2]int{-1, -1}, meshes: r.ex.meshes}
	sites, err := scanSites(v, nil, [2]int{-1, -1}, false, inner)
	if err != nil {
		return "", err
	}
	var edits []edit
	for _, s := range sites {
		if s.kind != siteRef && s.kind != siteManual {
			continue
		}
		repl, err := r.rewrite(s, v[s.at:s.end])
		if err != nil {
			return "", err
		}
		edits = append(edits, edit{at: s.at, del: s.end - s.at, insert: repl})
	}
	return mlir.Quote(applyEdits(v, edits)), nil
}

// roundTripMeshes returns the xla.sdy.meshes value naming the module's meshes:
// "{mesh = #sdy.mesh<[\"x\"=4]>}".
func roundTripMeshes(ops []shardy.MeshOp) string {
	parts := make([]string, 0, len(ops))
	for _, op := range ops {
		if !op.Mesh().IsMaximal() {
			parts = append(parts, op.Name()+" = #sdy.mesh"+op.Mesh().String())
		}
	}
	return mlir.Quote("{" + strings.Join(parts, ", ") + "}")
}

// moduleNumPartitions reads mhlo.num_partitions from the module attributes (1 when absent;
// said reports whether it was there).
func moduleNumPartitions(text string, sig *mainSig) (n int, said bool, err error) {
	if sig.moduleAttrs[0] < 0 {
		return 1, false, nil
	}
	parts, keys := dictEntries(text, sig.moduleAttrs[0])
	for i, k := range keys {
		if k != "mhlo.num_partitions" {
			continue
		}
		entry := text[parts[i][0]:parts[i][1]]
		v := strings.TrimSpace(entry[strings.IndexByte(entry, '=')+1:])
		if j := strings.IndexByte(v, ':'); j >= 0 {
			v = strings.TrimSpace(v[:j])
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, false, fmt.Errorf("wrap: %w: mhlo.num_partitions = %s", ErrModule, v)
		}
		return n, true, nil
	}
	return 1, false, nil
}

// sigEntryEdit returns the edit that gives @main's argument or result e the attribute attr
// ("key = value"; "" for none): existing shardings are dropped (all forms with replace, the
// native ones otherwise) and the other attributes kept; with replace, an argument's
// tf.aliasing_output becomes jax.buffer_donor. In the round-trip form the sharding
// goes into mhlo.frontend_attributes as xla.sdy.sharding (for results, Module writes it on the
// xla.sdy.FuncResultSharding call instead). ok is false when nothing changes.
func sigEntryEdit(text string, e sigEntry, attr string, target form, replace, result bool) (edit, bool) {
	var entries []string
	frontend := []string(nil) // the entries of mhlo.frontend_attributes, when present
	hasFrontend := false
	changed := false
	if e.attrs != "" {
		parts, keys := dictEntries(text, e.attrsAt)
		for i, part := range parts {
			switch keys[i] {
			case "sdy.sharding", "mhlo.sharding":
				changed = true
				continue
			case "tf.aliasing_output":
				// The aliased result may be laid out otherwise on the new mesh, and XLA refuses to
				// alias buffers of different shard sizes: the argument stays donated, and XLA
				// decides whether to reuse it.
				if replace && !result {
					changed = true
					entries = append(entries, "jax.buffer_donor = true")
					continue
				}
			case "mhlo.frontend_attributes":
				open := valueOpen(text, part)
				if open < 0 {
					break
				}
				hasFrontend = true
				inner, innerKeys := dictEntries(text, open)
				for j, ip := range inner {
					if innerKeys[j] == "xla.sdy.sharding" && replace {
						changed = true
						continue
					}
					frontend = append(frontend, strings.TrimSpace(text[ip[0]:ip[1]]))
				}
				continue
			}
			entries = append(entries, strings.TrimSpace(text[part[0]:part[1]]))
		}
	}
	if attr != "" {
		changed = true
		if target == formRoundTrip {
			if !result {
				value := strings.TrimSpace(attr[strings.IndexByte(attr, '=')+1:])
				frontend = append([]string{"xla.sdy.sharding = " + mlir.Quote(value)}, frontend...)
				hasFrontend = true
			}
		} else {
			entries = append([]string{attr}, entries...)
		}
	}
	if !changed {
		return edit{}, false
	}
	if hasFrontend && len(frontend) > 0 {
		entries = append(entries, "mhlo.frontend_attributes = {"+strings.Join(frontend, ", ")+"}")
	}
	switch {
	case e.attrs == "" && len(entries) == 0:
		return edit{}, false
	case e.attrs == "":
		return edit{at: e.typeEnd, insert: " {" + strings.Join(entries, ", ") + "}"}, true
	case len(entries) == 0:
		at := e.attrsAt
		for at > e.typeEnd && (text[at-1] == ' ' || text[at-1] == '\t') {
			at--
		}
		return edit{at: at, del: e.attrsAt + len(e.attrs) - at}, true
	}
	return edit{at: e.attrsAt, del: len(e.attrs), insert: "{" + strings.Join(entries, ", ") + "}"}, true
}

// reshardBody returns the edits that move the module's own shardings onto the mesh of m, the
// module of the new shardings (ReplaceShardings): mesh symbols, sharding references, manual
// axes, round-trip strings and GSPMD strings in the body, and in the round-trip form the result
// shardings (resSh: one per result, zero for none).
func reshardBody(m *lower.Module, text string, sig *mainSig, ex *existing, target form, resSh []mesh.NamedSharding) ([]edit, error) {
	var sym *shardy.MeshOp
	for _, op := range m.Meshes() {
		if !op.Mesh().IsMaximal() {
			sym = &op
			break
		}
	}
	needsMesh := slices.ContainsFunc(ex.sites, func(s site) bool {
		return s.kind == siteRef || s.kind == siteManual || s.kind == siteSdyString
	})
	if sym == nil {
		if needsMesh || target == formRoundTrip && ex.rtMeshes[0] >= 0 {
			return nil, fmt.Errorf("wrap: %w: the module's body has shardings, but no argument or result sharding gives the mesh to move them to", ErrModule)
		}
		return nil, nil
	}
	if target == formGSPMD && ex.rtMeshes[0] >= 0 {
		return nil, fmt.Errorf("wrap: %w: %w: a module in Shardy's round-trip form (xla.sdy.meshes) cannot be written for GSPMD; re-shard it with the Shardy partitioner", ErrModule, lower.ErrPartitioner)
	}
	r := &resharder{ex: ex, name: sym.Name(), mesh: sym.Mesh(), target: target, n: m.NumPartitions()}
	var results map[int]string // round trip: replacement strings of FuncResultSharding sites
	var extra []edit
	if target == formRoundTrip {
		var err error
		if results, extra, err = r.resultShardings(text, sig, resSh); err != nil {
			return nil, err
		}
	}
	skip := ex
	if len(results) > 0 {
		c := *ex
		c.sites = slices.DeleteFunc(slices.Clone(ex.sites), func(s site) bool { _, ok := results[s.at]; return ok })
		skip = &c
		for at, repl := range results {
			i := slices.IndexFunc(ex.sites, func(s site) bool { return s.at == at })
			extra = append(extra, edit{at: at, del: ex.sites[i].end - at, insert: repl})
		}
	}
	r.ex = skip
	edits, err := r.edits(text)
	if err != nil {
		return nil, err
	}
	return append(edits, extra...), nil
}

// resultShardings writes the result shardings of a round-trip module, which XLA reads from
// the xla.sdy.FuncResultSharding custom calls feeding @main's return: it returns the new
// string of each such call's sharding site (by offset), and the edits that add a call for a
// result that has none.
func (r *resharder) resultShardings(text string, sig *mainSig, resSh []mesh.NamedSharding) (map[int]string, []edit, error) {
	body, err := readMainBody(text)
	if err != nil {
		return nil, nil, err
	}
	if len(body.returned) != len(sig.results) {
		return nil, nil, fmt.Errorf("wrap: %w: @main returns %d values for %d results", ErrModule, len(body.returned), len(sig.results))
	}
	repl := map[int]string{}
	var edits []edit
	var added strings.Builder
	for i, op := range body.returned {
		shape, err := stablehlo.ParseShape(sig.results[i].typ)
		if err != nil {
			return nil, nil, fmt.Errorf("wrap: result %d: %w: %w", i, ErrModule, err)
		}
		var value string
		if s := resSh[i]; s.Key() != "" {
			ts, err := shardy.FromNamedSharding(s, r.name, shape.Rank())
			if err != nil {
				return nil, nil, fmt.Errorf("wrap: result %d: %w: %w: %w", i, ErrModule, lower.ErrSharding, err)
			}
			value = ts.Stripped()
		} else {
			open := make([]shardy.DimSharding, shape.Rank())
			for d := range open {
				open[d] = shardy.Open()
			}
			value = shardy.NewTensorSharding(r.name, open...).Stripped()
		}
		perValue := mlir.Quote("#sdy.sharding_per_value<[" + value + "]>")
		if def, ok := body.funcResult[op.Text]; ok {
			at := slices.IndexFunc(r.ex.sites, func(s site) bool {
				return s.kind == siteSdyString && s.key == "xla.sdy.sharding" && s.at > def[0] && s.at < def[1]
			})
			if at >= 0 {
				repl[r.ex.sites[at].at] = perValue
				continue
			}
		}
		if resSh[i].Key() == "" {
			continue
		}
		name := "%xlamesh_result_sharding_" + strconv.Itoa(i)
		fmt.Fprintf(&added, "%s = stablehlo.custom_call @xla.sdy.FuncResultSharding(%s) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = %s}} : (%s) -> %s\n%s",
			name, op.Text, perValue, sig.results[i].typ, sig.results[i].typ, body.indent)
		edits = append(edits, edit{at: op.Off, del: len(op.Text), insert: name})
	}
	if added.Len() > 0 {
		edits = append(edits, edit{at: body.returnAt, insert: added.String()})
	}
	return repl, edits, nil
}

// mainBody is what resultShardings needs of @main's body.
type mainBody struct {
	returnAt   int               // offset of the return op
	indent     string            // the return op's indentation
	returned   []mlir.Token      // its operands (%names)
	funcResult map[string][2]int // %name -> span of the op defining it, for xla.sdy.FuncResultSharding calls
}

// readMainBody finds @main's body, its return op and the xla.sdy.FuncResultSharding calls.
func readMainBody(text string) (*mainBody, error) {
	s := mlir.NewScanner(text)
	var prev mlir.Token
	inMain, depth := false, 0
	b := &mainBody{returnAt: -1, funcResult: map[string][2]int{}}
	stmt, stmtAt, stmtIsFR := "", -1, false
	endStmt := func(end int) {
		if stmt != "" && stmtIsFR {
			b.funcResult[stmt] = [2]int{stmtAt, end}
		}
		stmt, stmtAt, stmtIsFR = "", -1, false
	}
	for t := s.Next(); t.Kind != mlir.EOF; prev, t = t, s.Next() {
		switch {
		case !inMain && t.Kind == mlir.AtIdent && s.Depth() == 1 && (prev.Is(mlir.Ident, "func.func") || prev.Kind == mlir.Ident && prev.Text != "module"):
			if name, _ := t.Symbol(); name == "main" {
				inMain = true
			}
		case inMain && depth == 0:
			if t.Is(mlir.Punct, "{") && s.Depth() == 2 && !prev.Is(mlir.Ident, "attributes") {
				depth = 2
			}
		case inMain && s.Depth() < depth:
			endStmt(t.Off)
			if b.returnAt < 0 {
				return nil, fmt.Errorf("wrap: %w: @main has no return op", ErrModule)
			}
			return b, nil
		case inMain && s.Depth() == depth && t.Kind == mlir.PercentIdent && s.Peek().Is(mlir.Punct, "="):
			endStmt(t.Off)
			stmt, stmtAt = t.Text, t.Off
		case inMain && stmt != "" && (t.Is(mlir.AtIdent, "@xla.sdy.FuncResultSharding") || t.Is(mlir.String, `"xla.sdy.FuncResultSharding"`)):
			stmtIsFR = true
		case inMain && s.Depth() == depth && (t.Is(mlir.Ident, "return") || t.Is(mlir.Ident, "func.return") || t.Is(mlir.String, `"func.return"`)):
			endStmt(t.Off)
			b.returnAt = t.Off
			line := strings.LastIndexByte(text[:t.Off], '\n') + 1
			if strings.TrimSpace(text[line:t.Off]) == "" {
				b.indent = text[line:t.Off]
			}
			for t = s.Next(); t.Kind != mlir.EOF && !t.Is(mlir.Punct, ":") && !(t.Is(mlir.Punct, ")") && s.Depth() == depth); t = s.Next() {
				if t.Kind == mlir.PercentIdent {
					b.returned = append(b.returned, t)
				}
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("wrap: %w: %w", ErrModule, err)
	}
	return nil, fmt.Errorf("wrap: %w: no @main body", ErrModule)
}
