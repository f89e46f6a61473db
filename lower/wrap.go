package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
)

// Wrap annotates StableHLO text written elsewhere (for example by jax.export or another
// compiler) for sharded compilation. It finds the module and @main's signature, attaches
// one sharding per argument and per result (a zero mesh.NamedSharding leaves that one
// unannotated), adds the `sdy.mesh` symbol (Shardy) and sets mhlo.num_partitions and
// mhlo.num_replicas on the module. The rest of the text is kept byte for byte.
//
// A sharding attribute already on an argument or result (`mhlo.sharding`, `sdy.sharding`)
// is replaced; other attributes are kept. Errors wrap ErrWrap: no module or @main, a count
// mismatch, a value that is not a static ranked tensor, or a Shardy module that already
// has sdy.mesh symbols; sharding errors are those of Function.Arg.
func Wrap(text string, args, results []mesh.NamedSharding, opts ...Option) (*Program, error) {
	m := NewModule("", opts...)
	sig, err := findMain(text)
	if err != nil {
		return nil, err
	}
	if m.cfg.partitioner == Shardy && strings.Contains(text, "sdy.mesh @") {
		return nil, fmt.Errorf("lower: wrap: %w: the module already has sdy.mesh symbols", ErrWrap)
	}
	if len(args) != len(sig.args) || len(results) != len(sig.results) {
		return nil, fmt.Errorf("lower: wrap: %w: @main has %d arguments and %d results, got %d and %d shardings",
			ErrWrap, len(sig.args), len(sig.results), len(args), len(results))
	}
	p := &Program{partitioner: m.cfg.partitioner}
	var edits []edit
	annotate := func(kind string, i int, e sigEntry, s mesh.NamedSharding) (Shape, *mesh.NamedSharding, error) {
		shape, err := parseTensorType(e.typ)
		if s.Key() == "" {
			return shape, nil, nil
		}
		if err != nil {
			return Shape{}, nil, fmt.Errorf("lower: wrap: %s %d: %w: %w", kind, i, ErrWrap, err)
		}
		attr, err := m.entryShardingAttr(s, shape)
		if err != nil {
			return Shape{}, nil, &OpError{Func: "main", Op: "func.func " + kind, Operand: i, Err: err}
		}
		if e.attrs == "" {
			edits = append(edits, edit{at: e.typeEnd, insert: " {" + attr + "}"})
		} else {
			// Keep the other attributes; a sharding already there is replaced.
			entries := []string{attr}
			for _, part := range splitTop(text, e.attrsAt+1, e.attrsAt+len(e.attrs)-1) {
				entry := strings.TrimSpace(text[part[0]:part[1]])
				if !strings.HasPrefix(entry, "sdy.sharding") && !strings.HasPrefix(entry, "mhlo.sharding") {
					entries = append(entries, entry)
				}
			}
			edits = append(edits, edit{at: e.attrsAt, del: len(e.attrs), insert: "{" + strings.Join(entries, ", ") + "}"})
		}
		return shape, &s, nil
	}
	for i, e := range sig.args {
		shape, sh, err := annotate("argument", i, e, args[i])
		if err != nil {
			return nil, err
		}
		p.args, p.argSh = append(p.args, shape), append(p.argSh, sh)
	}
	for i, e := range sig.results {
		shape, sh, err := annotate("result", i, e, results[i])
		if err != nil {
			return nil, err
		}
		p.results, p.resSh = append(p.results, shape), append(p.resSh, sh)
	}
	if sig.bareResult && p.resSh[0] != nil {
		edits = append(edits, edit{at: sig.results[0].typeAt, insert: "("}, edit{at: sig.results[0].typeEnd, insert: ")"})
	}
	// Module attributes and mesh symbols.
	var meshes strings.Builder
	if m.cfg.partitioner == Shardy {
		for _, s := range m.meshes {
			meshes.WriteString("\n  sdy.mesh @" + s.name + " = " + s.text)
		}
	}
	edits = append(edits, moduleEdits(text, sig, m.numPartitions(), meshes.String())...)
	p.numPartitions = m.numPartitions()
	p.assignment = slices.Clone(m.assignment)
	p.text = applyEdits(text, edits)
	return p, nil
}

type edit struct {
	at, del int
	insert  string
}

func applyEdits(text string, edits []edit) string {
	slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
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
	bareResult    bool // "-> tensor<...>" without parentheses
	moduleAt      int  // offset of "module"
	moduleBody    int  // offset of the module's opening '{'
	moduleAttrs   [2]int
}

// findMain locates the module header and @main's signature.
func findMain(text string) (*mainSig, error) {
	sig := &mainSig{}
	mi := indexWord(text, "module")
	if mi < 0 {
		return nil, fmt.Errorf("lower: wrap: %w: no module", ErrWrap)
	}
	sig.moduleAt = mi
	// The module's opening brace: the first '{' at depth 0 after "module", skipping an
	// "attributes {...}" dictionary.
	i := mi + len("module")
	sig.moduleAttrs = [2]int{-1, -1}
	for i < len(text) {
		switch {
		case strings.HasPrefix(text[i:], "attributes"):
			j := strings.IndexByte(text[i:], '{')
			if j < 0 {
				return nil, fmt.Errorf("lower: wrap: %w: module attributes without a dictionary", ErrWrap)
			}
			end := matchClose(text, i+j)
			if end < 0 {
				return nil, fmt.Errorf("lower: wrap: %w: unterminated module attributes", ErrWrap)
			}
			sig.moduleAttrs = [2]int{i + j, end}
			i = end + 1
			continue
		case text[i] == '{':
			sig.moduleBody = i
		}
		if text[i] == '{' {
			break
		}
		i++
	}
	if sig.moduleBody == 0 {
		return nil, fmt.Errorf("lower: wrap: %w: module has no body", ErrWrap)
	}
	fi := -1
	for _, pat := range []string{"func.func public @main(", "func.func @main("} {
		if j := strings.Index(text, pat); j >= 0 {
			fi = j + len(pat) - 1
			break
		}
	}
	if fi < 0 {
		return nil, fmt.Errorf("lower: wrap: %w: no func.func @main", ErrWrap)
	}
	end := matchClose(text, fi)
	if end < 0 {
		return nil, fmt.Errorf("lower: wrap: %w: unterminated @main arguments", ErrWrap)
	}
	for _, part := range splitTop(text, fi+1, end) {
		colon := strings.IndexByte(text[part[0]:part[1]], ':')
		if colon < 0 {
			return nil, fmt.Errorf("lower: wrap: %w: cannot read argument %q", ErrWrap, text[part[0]:part[1]])
		}
		sig.args = append(sig.args, readEntry(text, part[0]+colon+1, part[1]))
	}
	i = skipSpace(text, end+1)
	if strings.HasPrefix(text[i:], "->") {
		i = skipSpace(text, i+2)
		if text[i] == '(' {
			rend := matchClose(text, i)
			if rend < 0 {
				return nil, fmt.Errorf("lower: wrap: %w: unterminated @main results", ErrWrap)
			}
			for _, part := range splitTop(text, i+1, rend) {
				sig.results = append(sig.results, readEntry(text, part[0], part[1]))
			}
		} else {
			e := readEntry(text, i, len(text))
			e.attrs = ""
			sig.results = []sigEntry{e}
			sig.bareResult = true
		}
	}
	return sig, nil
}

// readEntry reads "TYPE {attrs}?" in text[i:end].
func readEntry(text string, i, end int) sigEntry {
	i = skipSpace(text, i)
	j := i
	depth := 0
	for j < end {
		c := text[j]
		if depth == 0 && (c == ' ' || c == '\n' || c == '\t' || c == '{' || c == ',' || c == ')') {
			break
		}
		switch c {
		case '<', '(', '[':
			depth++
		case '>', ')', ']':
			depth--
		}
		j++
	}
	e := sigEntry{typ: text[i:j], typeAt: i, typeEnd: j}
	k := skipSpace(text, j)
	if k < end && text[k] == '{' {
		if c := matchClose(text, k); c >= 0 && c < end {
			e.attrs, e.attrsAt = text[k:c+1], k
		}
	}
	return e
}

// moduleEdits sets mhlo.num_partitions/num_replicas in the module's attributes (replacing
// existing values) and inserts the mesh symbols at the top of the module body.
func moduleEdits(text string, sig *mainSig, n int, meshes string) []edit {
	ours := "mhlo.num_partitions = " + strconv.Itoa(n) + " : i32, mhlo.num_replicas = 1 : i32"
	var edits []edit
	if a := sig.moduleAttrs; a[0] >= 0 {
		// Rebuild the dictionary without the two keys, then append ours.
		var keep []string
		for _, part := range splitTop(text, a[0]+1, a[1]) {
			entry := strings.TrimSpace(text[part[0]:part[1]])
			if !strings.HasPrefix(entry, "mhlo.num_partitions") && !strings.HasPrefix(entry, "mhlo.num_replicas") {
				keep = append(keep, entry)
			}
		}
		edits = append(edits, edit{at: a[0], del: a[1] - a[0] + 1, insert: "{" + strings.Join(append(keep, ours), ", ") + "}"})
	} else {
		edits = append(edits, edit{at: sig.moduleBody, insert: "attributes {" + ours + "} "})
	}
	if meshes != "" {
		edits = append(edits, edit{at: sig.moduleBody + 1, insert: meshes})
	}
	return edits
}

func indexWord(text, w string) int {
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return -1
		}
		j += i
		before := j == 0 || strings.ContainsRune(" \n\t", rune(text[j-1]))
		after := j+len(w) < len(text) && strings.ContainsRune(" \n\t{@", rune(text[j+len(w)]))
		if before && after {
			return j
		}
		i = j + len(w)
	}
}

func skipSpace(text string, i int) int {
	for i < len(text) && strings.ContainsRune(" \n\t\r", rune(text[i])) {
		i++
	}
	return i
}

// matchClose returns the offset of the bracket closing the one at text[i], skipping
// strings and nested brackets, or -1.
func matchClose(text string, i int) int {
	depth := 0
	for j := i; j < len(text); j++ {
		switch c := text[j]; c {
		case '"':
			for j++; j < len(text) && text[j] != '"'; j++ {
				if text[j] == '\\' {
					j++
				}
			}
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '}', '>':
			if c == '>' && j > 0 && text[j-1] == '-' {
				continue
			}
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// splitTop splits text[i:end] at commas outside brackets and strings, returning
// [start, end) pairs of the non-empty parts.
func splitTop(text string, i, end int) [][2]int {
	var parts [][2]int
	start, depth := i, 0
	for j := i; j < end; j++ {
		switch c := text[j]; c {
		case '"':
			for j++; j < end && text[j] != '"'; j++ {
				if text[j] == '\\' {
					j++
				}
			}
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '}', '>':
			if c == '>' && text[j-1] == '-' {
				continue
			}
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, [2]int{start, j})
				start = j + 1
			}
		}
	}
	if strings.TrimSpace(text[start:end]) != "" {
		parts = append(parts, [2]int{start, end})
	}
	return parts
}

// parseTensorType reads a static ranked tensor type such as "tensor<8x2xf32>".
func parseTensorType(t string) (Shape, error) {
	if !strings.HasPrefix(t, "tensor<") || !strings.HasSuffix(t, ">") {
		return Shape{}, fmt.Errorf("%q is not a ranked tensor type", t)
	}
	parts := strings.Split(t[len("tensor<"):len(t)-1], "x")
	d, err := ParseDType(parts[len(parts)-1])
	if err != nil {
		return Shape{}, fmt.Errorf("%q: %w", t, err)
	}
	dims := make([]int, len(parts)-1)
	for i, p := range parts[:len(parts)-1] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Shape{}, fmt.Errorf("%q is not a static tensor type", t)
		}
		dims[i] = n
	}
	return NewShape(d, dims...), nil
}
