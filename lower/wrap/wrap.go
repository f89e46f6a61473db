package wrap

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// ErrModule: Module could not find or annotate @main in the given text, or could not move the
// module's own shardings onto the new mesh.
var ErrModule = errors.New("cannot wrap module")

// Option configures Module.
type Option func(*config)

type config struct {
	partitioner lower.Partitioner
	existing    existingMode
}

// WithPartitioner selects the partitioner the shardings are written for (default Shardy), as
// lower.WithPartitioner does for a module built in Go. With KeepShardings it is the partitioner
// reported for a module whose text has no shardings to say it.
func WithPartitioner(p lower.Partitioner) Option { return func(c *config) { c.partitioner = p } }

// Module annotates StableHLO text written elsewhere (for example by jax.export or another
// compiler) for sharded compilation. It finds the module and @main's signature, attaches
// one sharding per argument and per result (a zero mesh.NamedSharding leaves that one
// unannotated), adds the `sdy.mesh` symbol (Shardy) and sets mhlo.num_partitions and
// mhlo.num_replicas on the module. The rest of the text is kept byte for byte.
//
// A module that already carries shardings is refused with Shardy unless the caller says what
// to do with them: ReplaceShardings moves the whole module onto the new mesh (see there),
// KeepShardings leaves it as it is and only reads it. Without either, a sharding already on
// an argument or result (`mhlo.sharding`, `sdy.sharding`) is replaced, other attributes are
// kept, and a Shardy module with meshes is an error. Errors wrap ErrModule: no module or @main,
// a count mismatch, a value that is not a static ranked tensor, a sharding in the body that
// does not fit the new mesh; a sharding that does not fit its argument or result is a
// *lower.OpError, as lower.Function.ShardedArg's is.
func Module(text string, args, results []mesh.NamedSharding, opts ...Option) (*lower.Program, error) {
	c := config{partitioner: lower.Shardy}
	for _, o := range opts {
		o(&c)
	}
	if err := mlir.Check(text); err != nil {
		return nil, fmt.Errorf("wrap: %w: %w", ErrModule, err)
	}
	m := lower.NewModule("", lower.WithPartitioner(c.partitioner))
	sig, err := findMain(text)
	if err != nil {
		return nil, err
	}
	ex, err := scanExisting(text, sig)
	if err != nil {
		return nil, err
	}
	mode := c.existing
	if mode == existingKeep {
		return keepProgram(text, sig, ex, args, results, c.partitioner)
	}
	if mlir.HasMeshAxesReplicaGroups(text) {
		// JAX 0.12's mesh-axes replica groups name the module's own meshes, which re-sharding
		// replaces: as dense groups they move to the new mesh like every other collective's.
		dense, err := mlir.DenseReplicaGroups(text)
		if err != nil {
			return nil, fmt.Errorf("wrap: %w: %w", ErrModule, err)
		}
		if sig, err = findMain(dense); err != nil {
			return nil, err
		}
		if ex, err = scanExisting(dense, sig); err != nil {
			return nil, err
		}
		text = dense
	}
	if mode == existingRefuse && c.partitioner == lower.Shardy && (sig.meshes || ex.rtMeshes[0] >= 0) {
		return nil, fmt.Errorf("wrap: %w: the module already has sdy.mesh symbols (say what to do with its shardings: ReplaceShardings or KeepShardings)", ErrModule)
	}
	if len(args) != len(sig.args) || len(results) != len(sig.results) {
		return nil, fmt.Errorf("wrap: %w: @main has %d arguments and %d results, got %d and %d shardings",
			ErrModule, len(sig.args), len(sig.results), len(args), len(results))
	}
	target := formShardy
	switch {
	case c.partitioner == lower.GSPMD:
		target = formGSPMD
	case mode == existingReplace && ex.form == formRoundTrip:
		target = formRoundTrip
	}
	info := lower.ProgramInfo{Partitioner: c.partitioner}
	var edits []edit
	annotate := func(kind string, i int, e sigEntry, s mesh.NamedSharding) (lower.Shape, error) {
		shape, err := stablehlo.ParseShape(e.typ)
		if s.Key() == "" && mode != existingReplace {
			return shape, nil
		}
		attr := ""
		if s.Key() != "" {
			if err != nil {
				return lower.Shape{}, fmt.Errorf("wrap: %s %d: %w: %w", kind, i, ErrModule, err)
			}
			a, err := m.EntryShardingAttr(s, shape)
			if err != nil {
				return lower.Shape{}, &lower.OpError{Pkg: "wrap", Func: "main", Op: "func.func " + kind, Operand: i, Err: err}
			}
			attr = a.Name + " = " + a.Value
		}
		if ed, ok := sigEntryEdit(text, e, attr, target, mode == existingReplace, kind == "result"); ok {
			edits = append(edits, ed)
		}
		return shape, nil
	}
	for i, e := range sig.args {
		shape, err := annotate("argument", i, e, args[i])
		if err != nil {
			return nil, err
		}
		info.ArgShapes = append(info.ArgShapes, shape)
	}
	for i, e := range sig.results {
		shape, err := annotate("result", i, e, results[i])
		if err != nil {
			return nil, err
		}
		info.ResultShapes = append(info.ResultShapes, shape)
	}
	info.ArgShardings, info.ResultShardings = slices.Clone(args), slices.Clone(results)
	if sig.bareResult && results[0].Key() != "" && target != formRoundTrip {
		edits = append(edits, edit{at: sig.results[0].typeAt, insert: "("}, edit{at: sig.results[0].typeEnd, insert: ")"})
	}
	var meshes strings.Builder
	rt := moduleRewrite{at: [2]int{-1, -1}}
	if mode == existingReplace {
		body, err := reshardBody(m, text, sig, ex, target, results)
		if err != nil {
			return nil, err
		}
		edits = append(edits, body...)
		if ex.rtMeshes[0] >= 0 {
			rt = moduleRewrite{at: ex.rtMeshes, insert: roundTripMeshes(m.Meshes())}
		}
	}
	// Module attributes and mesh symbols.
	if target == formShardy {
		for _, op := range m.Meshes() {
			meshes.WriteString("\n  " + op.JAXString())
		}
	}
	edits = append(edits, moduleEdits(text, sig, m.NumPartitions(), meshes.String(), rt)...)
	info.NumPartitions = m.NumPartitions()
	info.DeviceAssignment = m.DeviceAssignment()
	info.Text = applyEdits(text, edits)
	return lower.NewProgram(info)
}

// keepProgram is Module with KeepShardings: the text as it is, and what it says.
func keepProgram(text string, sig *mainSig, ex *existing, args, results []mesh.NamedSharding, def lower.Partitioner) (*lower.Program, error) {
	for _, s := range append(slices.Clone(args), results...) {
		if s.Key() != "" {
			return nil, fmt.Errorf("wrap: %w: KeepShardings with a sharding %v to attach", ErrModule, s)
		}
	}
	if (args != nil && len(args) != len(sig.args)) || (results != nil && len(results) != len(sig.results)) {
		return nil, fmt.Errorf("wrap: %w: @main has %d arguments and %d results, got %d and %d shardings",
			ErrModule, len(sig.args), len(sig.results), len(args), len(results))
	}
	n, said, err := moduleNumPartitions(text, sig)
	if err != nil {
		return nil, err
	}
	info := lower.ProgramInfo{Text: text, Partitioner: def}
	if said {
		info.NumPartitions = n
	}
	switch ex.form {
	case formGSPMD:
		info.Partitioner = lower.GSPMD
	case formShardy, formRoundTrip:
		info.Partitioner = lower.Shardy
	}
	for i, e := range sig.args {
		shape, err := stablehlo.ParseShape(e.typ)
		if err != nil {
			return nil, fmt.Errorf("wrap: argument %d: %w: %w", i, ErrModule, err)
		}
		info.ArgShapes = append(info.ArgShapes, shape)
	}
	for i, e := range sig.results {
		shape, err := stablehlo.ParseShape(e.typ)
		if err != nil {
			return nil, fmt.Errorf("wrap: result %d: %w: %w", i, ErrModule, err)
		}
		info.ResultShapes = append(info.ResultShapes, shape)
	}
	return lower.NewProgram(info)
}

type edit struct {
	at, del int
	insert  string
}

func applyEdits(text string, edits []edit) string {
	// By offset; at one offset, insertions before the deletion that starts there.
	slices.SortStableFunc(edits, func(a, b edit) int {
		if a.at != b.at {
			return a.at - b.at
		}
		return min(a.del, 1) - min(b.del, 1)
	})
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(text[last:e.at])
		b.WriteString(e.insert)
		last = e.at + e.del
	}
	b.WriteString(text[last:])
	return b.String()
}

// sigEntry is one argument or result of @main: its type and attribute dictionary with
// their byte offsets in the text.
type sigEntry struct {
	typ             string
	typeAt, typeEnd int
	attrs           string // "{...}" or ""
	attrsAt         int
}

type mainSig struct {
	args, results []sigEntry
	bareResult    bool   // "-> tensor<...>" without parentheses
	moduleBody    int    // offset of the module's opening '{'
	moduleAttrs   [2]int // offsets of the module attributes' '{' and '}', or -1
	meshes        bool   // the module body has sdy.mesh ops
}

// sigReader reads the module header and @main's signature with the MLIR scanner, so strings
// and comments are never mistaken for code.
type sigReader struct {
	s    *mlir.Scanner
	tok  mlir.Token
	text string
}

func (r *sigReader) next() mlir.Token {
	r.tok = r.s.Next()
	return r.tok
}

// level returns the bracket depth the current token sits at: for an opening bracket, the
// depth outside it.
func (r *sigReader) level() int {
	if t := r.tok; t.Kind == mlir.Punct && (t.Text == "(" || t.Text == "[" || t.Text == "{" || t.Text == "<" || t.Text == "{-#") {
		return r.s.Depth() - 1
	}
	return r.s.Depth()
}

// errorf returns an ErrModule error, or the scanner's error if it stopped on one.
func (r *sigReader) errorf(format string, args ...any) error {
	if err := r.s.Err(); err != nil {
		return fmt.Errorf("wrap: %w: %w", ErrModule, err)
	}
	return fmt.Errorf("wrap: %w: "+format, append([]any{ErrModule}, args...)...)
}

// skipTo reads tokens until the bracket open before the current token closes (depth below
// d); it returns the closing token.
func (r *sigReader) skipTo(d int) mlir.Token {
	for r.s.Depth() >= d && r.tok.Kind != mlir.EOF {
		r.next()
	}
	return r.tok
}

// findMain locates the module header, its sdy.mesh ops and @main's signature.
func findMain(text string) (*mainSig, error) {
	r := &sigReader{s: mlir.NewScanner(text), text: text}
	sig := &mainSig{moduleAttrs: [2]int{-1, -1}}
	// The module op: the first "module" outside any bracket.
	for r.next(); !(r.tok.Is(mlir.Ident, "module") && r.s.Depth() == 0); r.next() {
		if r.tok.Kind == mlir.EOF {
			return nil, r.errorf("no module")
		}
	}
	if r.next().Kind == mlir.AtIdent {
		r.next()
	}
	if r.tok.Is(mlir.Ident, "attributes") {
		if !r.next().Is(mlir.Punct, "{") {
			return nil, r.errorf("module attributes without a dictionary")
		}
		open := r.tok.Off
		sig.moduleAttrs = [2]int{open, r.skipTo(1).Off}
		r.next()
	}
	if !r.tok.Is(mlir.Punct, "{") || r.s.Depth() != 1 {
		return nil, r.errorf("module has no body")
	}
	sig.moduleBody = r.tok.Off
	found := false
	for r.next(); r.s.Depth() >= 1; r.next() {
		if r.tok.Kind == mlir.EOF {
			return nil, r.errorf("unterminated module")
		}
		if r.s.Depth() != 1 || r.tok.Kind != mlir.Ident {
			continue
		}
		switch r.tok.Text {
		case "sdy.mesh":
			sig.meshes = true
		case "func.func":
			for r.next().Kind == mlir.Ident { // visibility
			}
			if r.tok.Kind != mlir.AtIdent {
				continue
			}
			if name, _ := r.tok.Symbol(); name != "main" || found {
				continue
			}
			found = true
			if err := r.signature(sig); err != nil {
				return nil, err
			}
		}
	}
	if !found {
		return nil, r.errorf("no func.func @main")
	}
	return sig, nil
}

// signature reads "(args) (-> results)?" after @main.
func (r *sigReader) signature(sig *mainSig) error {
	if !r.next().Is(mlir.Punct, "(") {
		return r.errorf("@main has no argument list")
	}
	args, err := r.entries(true)
	if err != nil {
		return err
	}
	sig.args = args
	if !r.next().Is(mlir.Punct, "->") {
		return nil // no results; the token is the body's '{' or "attributes"
	}
	if r.next().Is(mlir.Punct, "(") {
		sig.results, err = r.entries(false)
		return err
	}
	// A bare result type: its tokens up to the body or the attributes keyword.
	e := sigEntry{typeAt: r.tok.Off}
	d := r.level()
	for ; !(r.level() == d && (r.tok.Is(mlir.Punct, "{") || r.tok.Is(mlir.Ident, "attributes"))); r.next() {
		if r.tok.Kind == mlir.EOF {
			return r.errorf("unterminated @main result type")
		}
		e.typeEnd = r.tok.End()
	}
	if e.typeEnd == 0 {
		return r.errorf("@main has no result type after '->'")
	}
	e.typ = r.text[e.typeAt:e.typeEnd]
	sig.results, sig.bareResult = []sigEntry{e}, true
	return nil
}

// entries reads a parenthesised list of "%name: TYPE {attrs}? loc(...)?" (named, the
// arguments) or "TYPE {attrs}? loc(...)?" (the results), from after its '(' through its ')'.
func (r *sigReader) entries(named bool) ([]sigEntry, error) {
	d := r.s.Depth() // inside the '('
	var out []sigEntry
	for {
		if r.next().Is(mlir.Punct, ")") && r.s.Depth() == d-1 {
			return out, nil
		}
		if named {
			if r.tok.Kind != mlir.PercentIdent || !r.next().Is(mlir.Punct, ":") {
				return nil, r.errorf("cannot read @main argument %d at %q", len(out), r.tok.Text)
			}
			r.next()
		}
		e := sigEntry{typeAt: r.tok.Off}
		// The type: every token until, at this depth, '{', ',', ')' or "loc".
		for ; ; r.next() {
			if r.tok.Kind == mlir.EOF {
				return nil, r.errorf("unterminated @main signature")
			}
			if r.level() <= d && (r.tok.Is(mlir.Punct, "{") || r.tok.Is(mlir.Punct, ",") || r.tok.Is(mlir.Punct, ")") || r.tok.Is(mlir.Ident, "loc")) {
				break
			}
			e.typeEnd = r.tok.End()
		}
		if e.typeEnd == 0 {
			return nil, r.errorf("@main entry %d has no type", len(out))
		}
		e.typ = r.text[e.typeAt:e.typeEnd]
		if r.tok.Is(mlir.Punct, "{") {
			e.attrsAt = r.tok.Off
			e.attrs = r.text[e.attrsAt:r.skipTo(d+1).End()]
			r.next()
		}
		if r.tok.Is(mlir.Ident, "loc") {
			r.next() // '('
			r.skipTo(d + 1)
			r.next()
		}
		out = append(out, e)
		switch {
		case r.tok.Is(mlir.Punct, ")") && r.s.Depth() == d-1:
			return out, nil
		case !r.tok.Is(mlir.Punct, ","):
			return nil, r.errorf("expected ',' or ')' after @main entry %d, found %q", len(out)-1, r.tok.Text)
		}
	}
}

// dictEntries returns the [start, end) offsets of the entries of the attribute dictionary
// whose '{' is at text[open], and the key of each (an identifier or an unquoted string).
func dictEntries(text string, open int) (parts [][2]int, keys []string) {
	s := mlir.NewScanner(text[open:])
	s.Next() // '{'
	start := open + 1
	key := ""
	for {
		t := s.Next()
		switch {
		case t.Kind == mlir.EOF:
			return parts, keys
		case s.Depth() == 0 || s.Depth() == 1 && t.Is(mlir.Punct, ","):
			if strings.TrimSpace(text[start:open+t.Off]) != "" {
				parts, keys = append(parts, [2]int{start, open + t.Off}), append(keys, key)
			}
			if s.Depth() == 0 {
				return parts, keys
			}
			start, key = open+t.End(), ""
		case key == "" && s.Depth() == 1 && t.Kind == mlir.Ident:
			key = t.Text
		case key == "" && s.Depth() == 1 && t.Kind == mlir.String:
			key, _ = mlir.Unquote(t.Text)
		}
	}
}

// moduleRewrite replaces the span at (inside the module attributes) with insert.
type moduleRewrite struct {
	at     [2]int
	insert string
}

// moduleEdits sets mhlo.num_partitions/num_replicas in the module's attributes (replacing
// existing values, and applying rt inside them) and inserts the mesh symbols at the top of
// the module body.
func moduleEdits(text string, sig *mainSig, n int, meshes string, rt moduleRewrite) []edit {
	ours := "mhlo.num_partitions = " + strconv.Itoa(n) + " : i32, mhlo.num_replicas = 1 : i32"
	var edits []edit
	if a := sig.moduleAttrs; a[0] >= 0 {
		// Rebuild the dictionary without the two keys, then append ours.
		var keep []string
		parts, keys := dictEntries(text, a[0])
		for i, part := range parts {
			if keys[i] != "mhlo.num_partitions" && keys[i] != "mhlo.num_replicas" {
				entry := text[part[0]:part[1]]
				if rt.at[0] >= part[0] && rt.at[1] <= part[1] {
					entry = text[part[0]:rt.at[0]] + rt.insert + text[rt.at[1]:part[1]]
				}
				keep = append(keep, strings.TrimSpace(entry))
			}
		}
		edits = append(edits, edit{at: a[0], del: a[1] - a[0] + 1, insert: "{" + strings.Join(append(keep, ours), ", ") + "}"})
	} else {
		insert := "attributes {" + ours + "} "
		if c := text[sig.moduleBody-1]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			insert = " " + insert // module{ or module @m{
		}
		edits = append(edits, edit{at: sig.moduleBody, insert: insert})
	}
	if meshes != "" {
		if rest := text[sig.moduleBody+1:]; !strings.HasPrefix(strings.TrimLeft(rest, " \t\r"), "\n") {
			meshes += "\n" // the body's first op goes on a line of its own
		}
		edits = append(edits, edit{at: sig.moduleBody + 1, insert: meshes})
	}
	return edits
}
