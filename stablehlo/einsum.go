package stablehlo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// Einsum and MatMul: contractions written with jnp.einsum's subscripts or jnp.matmul's
// rules, lowered to dot_general, reduce, transpose, reshape and broadcast_in_dim.

// label is one einsum index: a letter (its rune), or one dimension covered by an ellipsis
// (ellipsisLabel + its position, counted so that the ellipses of all operands align at
// their right ends).
type label int

const ellipsisLabel label = 1 << 20

func (l label) String() string {
	if l >= ellipsisLabel {
		return fmt.Sprintf("'...' dimension %d", int(l-ellipsisLabel))
	}
	return fmt.Sprintf("'%c'", rune(l))
}

// einsumTerm is one parsed subscript: its letters and where its ellipsis sits (-1: none).
type einsumTerm struct {
	letters  []label
	ellipsis int // index in letters before which the ellipsis's dimensions go
	text     string
}

// parseTerm reads one subscript such as "bij" or "...ij".
func parseTerm(s string) (einsumTerm, error) {
	t := einsumTerm{ellipsis: -1, text: s}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if !strings.HasPrefix(s[i:], "...") || t.ellipsis >= 0 {
				return t, fmt.Errorf("%w: subscript %q: invalid ellipsis (one '...' per subscript)", ErrEinsum, s)
			}
			t.ellipsis = len(t.letters)
			i += 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t.letters = append(t.letters, label(c))
		default:
			return t, fmt.Errorf("%w: subscript %q: character %q is not a letter (labels are a-z and A-Z)", ErrEinsum, s, c)
		}
	}
	return t, nil
}

// expand returns the labels of a term for an operand of rank r, its ellipsis covering
// r - len(letters) dimensions, numbered so that they end at ellRank.
func (t einsumTerm) expand(r, ellRank int) []label {
	if t.ellipsis < 0 {
		return slices.Clone(t.letters)
	}
	n := r - len(t.letters)
	out := slices.Clone(t.letters[:t.ellipsis])
	for j := range n {
		out = append(out, ellipsisLabel+label(ellRank-n+j))
	}
	return append(out, t.letters[t.ellipsis:]...)
}

// einsumOperand is an operand during the contraction, with one label per dimension.
type einsumOperand struct {
	v      Value
	labels []label
}

// Einsum evaluates an Einstein summation such as "bij,bjk->bik" over xs, as jnp.einsum
// does: a label shared by two operands and absent from the output is contracted, one in
// the output is kept (a batch dimension when several operands have it), and one that
// appears in a single operand and not in the output is summed. A label repeated within
// one operand takes its diagonal ("ii->i"); "..." stands for the dimensions not named,
// aligned at the right and broadcast; without "->" the output is "..." followed by the
// labels that appear once, in alphabetical order (uppercase first). A label of size 1 in
// some operands broadcasts against a larger size in others, as in jnp.einsum. Operands
// have one element type; they are contracted left to right with dot_general.
//
// A malformed spec (a non-letter, a misplaced ellipsis, a term count other than len(xs),
// a term whose label count does not fit its operand's rank, an output label that is
// repeated or absent from the inputs) is an error wrapping ErrEinsum; labels whose sizes
// differ (and are not 1) are an error wrapping ErrShape. Both name the label.
func (f *Function) Einsum(spec string, xs ...Value) Value {
	const opName = "einsum"
	vs, ok := f.check(opName, xs...)
	if !ok {
		return Value{}
	}
	for i, v := range vs {
		vs[i] = f.materialize(v, v.shape)
	}
	if f.failed() {
		return Value{}
	}
	fail := func(i int, err error) Value {
		var v *value
		if i >= 0 {
			v = vs[i]
		}
		f.fail(opName, i, v, fmt.Errorf("spec %q: %w", spec, err))
		return Value{}
	}
	s := strings.ReplaceAll(spec, " ", "")
	in, out, explicit := strings.Cut(s, "->")
	if strings.Contains(out, "->") {
		return fail(-1, fmt.Errorf("%w: more than one '->'", ErrEinsum))
	}
	var terms []einsumTerm
	for _, ts := range strings.Split(in, ",") {
		t, err := parseTerm(ts)
		if err != nil {
			return fail(-1, err)
		}
		terms = append(terms, t)
	}
	if len(terms) != len(vs) {
		return fail(-1, fmt.Errorf("%w: %d subscripts for %d operands", ErrEinsum, len(terms), len(vs)))
	}
	ellRank := 0
	for i, t := range terms {
		r := vs[i].shape.Rank()
		if (t.ellipsis < 0 && r != len(t.letters)) || (t.ellipsis >= 0 && r < len(t.letters)) {
			return fail(i, fmt.Errorf("%w: subscript %q has %d labels for operand %d of rank %d", ErrEinsum, t.text, len(t.letters), i, r))
		}
		if t.ellipsis >= 0 {
			ellRank = max(ellRank, r-len(t.letters))
		}
	}
	ops := make([]einsumOperand, len(vs))
	for i, t := range terms {
		ops[i] = einsumOperand{v: Value{vs[i]}, labels: t.expand(vs[i].shape.Rank(), ellRank)}
	}
	// The output labels.
	var outLabels []label
	if explicit {
		t, err := parseTerm(out)
		if err != nil {
			return fail(-1, err)
		}
		if t.ellipsis >= 0 {
			outLabels = t.expand(len(t.letters)+ellRank, ellRank)
		} else {
			outLabels = t.letters
		}
		for i, l := range t.letters {
			if slices.Index(t.letters, l) != i {
				return fail(-1, fmt.Errorf("%w: output label %v appears more than once", ErrEinsum, l))
			}
			if !slices.ContainsFunc(terms, func(t einsumTerm) bool { return slices.Contains(t.letters, l) }) {
				return fail(-1, fmt.Errorf("%w: output label %v does not appear in the inputs", ErrEinsum, l))
			}
		}
	} else {
		for j := range ellRank {
			outLabels = append(outLabels, ellipsisLabel+label(j))
		}
		counts := map[label]int{}
		for _, t := range terms {
			for _, l := range t.letters {
				counts[l]++
			}
		}
		var once []label
		for l, n := range counts {
			if n == 1 {
				once = append(once, l)
			}
		}
		slices.Sort(once)
		outLabels = append(outLabels, once...)
	}
	// Diagonals of repeated labels, then sizes: 1 broadcasts (the dimension is dropped from
	// that operand), any other difference is an error.
	for i := range ops {
		ops[i] = f.einsumDiagonals(opName, i, ops[i])
	}
	if f.failed() {
		return Value{}
	}
	size := map[label]int{}
	for _, o := range ops {
		for d, l := range o.labels {
			if n, ok := size[l]; !ok || n == 1 {
				size[l] = o.v.Shape().Dim(d)
			}
		}
	}
	for i, o := range ops {
		var keep []int
		for d, l := range o.labels {
			switch n := o.v.Shape().Dim(d); {
			case n == size[l]:
				keep = append(keep, d)
			case n != 1:
				return fail(i, fmt.Errorf("%w: label %v is %d in operand %d, but %d in another operand", ErrShape, l, n, i, size[l]))
			}
		}
		if len(keep) < len(o.labels) {
			ops[i] = f.einsumKeep(o, keep)
		}
	}
	// Contract left to right.
	acc := ops[0]
	for i := 1; i < len(ops); i++ {
		needed := slices.Clone(outLabels)
		for _, o := range ops[i+1:] {
			needed = append(needed, o.labels...)
		}
		acc = f.einsumPair(acc, ops[i], needed)
	}
	acc = f.einsumSum(acc, func(l label) bool { return slices.Contains(outLabels, l) })
	if f.failed() {
		return Value{}
	}
	perm := make([]int, len(outLabels))
	for j, l := range outLabels {
		perm[j] = slices.Index(acc.labels, l)
	}
	if isIdentity(perm) {
		return acc.v
	}
	return f.Transpose(acc.v, perm...)
}

func isIdentity(p []int) bool {
	for i, x := range p {
		if i != x {
			return false
		}
	}
	return true
}

// einsumDiagonals replaces each label repeated in o by one dimension holding the diagonal.
func (f *Function) einsumDiagonals(opName string, i int, o einsumOperand) einsumOperand {
	for {
		p, q := -1, -1
		for a, l := range o.labels {
			if b := slices.Index(o.labels[a+1:], l); b >= 0 {
				p, q = a, a+1+b
				break
			}
		}
		if p < 0 || f.failed() {
			return o
		}
		s := o.v.Shape()
		if s.Dim(p) != s.Dim(q) {
			f.failf(opName, i, o.v.v, ErrShape, "label %v repeated in operand %d has sizes %d and %d", o.labels[p], i, s.Dim(p), s.Dim(q))
			return o
		}
		is := s.WithDType(dtypes.Int32)
		mask := f.Equal(f.Iota(is, p), f.Iota(is, q))
		zero := f.Full(s, 0)
		o.v = f.Reduce(f.Select(mask, o.v, zero), Sum, q)
		o.labels = slices.Delete(slices.Clone(o.labels), q, q+1)
	}
}

// einsumKeep keeps the dimensions keep of o (the others have size 1).
func (f *Function) einsumKeep(o einsumOperand, keep []int) einsumOperand {
	var dims []int
	var labels []label
	for _, d := range keep {
		dims = append(dims, o.v.Shape().Dim(d))
		labels = append(labels, o.labels[d])
	}
	return einsumOperand{v: f.Reshape(o.v, dims...), labels: labels}
}

// einsumSum sums o over the labels that keep rejects.
func (f *Function) einsumSum(o einsumOperand, keep func(label) bool) einsumOperand {
	var dims []int
	var labels []label
	for d, l := range o.labels {
		if keep(l) {
			labels = append(labels, l)
		} else {
			dims = append(dims, d)
		}
	}
	if len(dims) == 0 || f.failed() {
		return o
	}
	return einsumOperand{v: f.Reduce(o.v, Sum, dims...), labels: labels}
}

// einsumPair contracts a and b, keeping the labels in needed: shared needed labels are
// batch dimensions, shared others are contracted, and labels of one side that are not
// needed are summed first.
func (f *Function) einsumPair(a, b einsumOperand, needed []label) einsumOperand {
	a = f.einsumSum(a, func(l label) bool { return slices.Contains(needed, l) || slices.Contains(b.labels, l) })
	b = f.einsumSum(b, func(l label) bool { return slices.Contains(needed, l) || slices.Contains(a.labels, l) })
	if f.failed() {
		return a
	}
	var d DotDims
	var batch []label
	for i, l := range a.labels {
		j := slices.Index(b.labels, l)
		if j < 0 {
			continue
		}
		if slices.Contains(needed, l) {
			d.LhsBatch, d.RhsBatch = append(d.LhsBatch, i), append(d.RhsBatch, j)
			batch = append(batch, l)
		} else {
			d.LhsContracting, d.RhsContracting = append(d.LhsContracting, i), append(d.RhsContracting, j)
		}
	}
	labels := batch
	for _, l := range a.labels {
		if !slices.Contains(b.labels, l) {
			labels = append(labels, l)
		}
	}
	for _, l := range b.labels {
		if !slices.Contains(a.labels, l) {
			labels = append(labels, l)
		}
	}
	return einsumOperand{v: f.DotGeneral(a.v, b.v, d), labels: labels}
}

// MatMul multiplies lhs and rhs with jnp.matmul's rules: [..., m, k] x [..., k, n] ->
// [..., m, n], the batch dimensions (all but the last two) broadcast with NumPy's rule; a
// rank-1 lhs is a row [k] and a rank-1 rhs a column [k], whose dimension the result drops
// (two rank-1 operands give their dot product, a scalar). Rank-0 operands are an error
// wrapping ErrShape. It builds what jnp.matmul builds: one dot_general (Params: DotDims)
// whose batch dimensions are those both operands have with one size; a batch dimension one
// operand lacks, or has as 1, is a free dimension of the other (nothing is broadcast, so a
// [batch, seq, d] activation times a [d, n] weight is a plain contraction), followed by a
// transpose into NumPy's order where that differs.
func (f *Function) MatMul(lhs, rhs Value) Value {
	const opName = "dot_general"
	vs, ok := f.check(opName, lhs, rhs)
	if !ok {
		return Value{}
	}
	a, b := f.materialize(vs[0], vs[0].shape), f.materialize(vs[1], vs[1].shape)
	if f.failed() {
		return Value{}
	}
	for i, v := range []*value{a, b} {
		if v.shape.Rank() == 0 {
			f.failf(opName, i, v, ErrShape, "MatMul needs operands of rank 1 or more, got %v and %v", a.shape, b.shape)
			return Value{}
		}
	}
	ra, rb := a.shape.Rank(), b.shape.Rank()
	aMat, bMat := ra > 1, rb > 1
	var aBatch, bBatch []int // the batch dimensions: all but the last two of a matrix
	if aMat {
		aBatch = a.shape.Dims()[:ra-2]
	}
	if bMat {
		bBatch = b.shape.Dims()[:rb-2]
	}
	if _, err := BroadcastShapes(aBatch, bBatch); err != nil {
		f.fail(opName, 1, b, fmt.Errorf("MatMul batch dimensions: %w", err))
		return Value{}
	}
	// As jnp.matmul: a batch dimension only one side has (missing, or 1 where the other's is
	// not) is a free dimension of that side, not broadcast; 1 on both sides is squeezed and
	// put back; equal sizes are dot_general batch dimensions. The result is dot_general's
	// (batch, a's free, b's free) transposed into NumPy's order.
	nb := max(len(aBatch), len(bBatch))
	at := func(dims []int, i int) int { // -1 where a side has no dimension i (NumPy's None)
		if j := i - (nb - len(dims)); j >= 0 {
			return dims[j]
		}
		return -1
	}
	var aSqueeze, bSqueeze, both, lhsBatch, rhsBatch, idxBatch, idxA, idxB []int
	for i := range nb {
		da, db := at(aBatch, i), at(bBatch, i)
		switch {
		case da < 0:
			idxB = append(idxB, i)
		case db < 0:
			idxA = append(idxA, i)
		case da == 1 && db == 1:
			aSqueeze = append(aSqueeze, len(idxBatch)+len(idxA)+len(aSqueeze))
			bSqueeze = append(bSqueeze, len(idxBatch)+len(idxB)+len(bSqueeze))
			both = append(both, i)
		case da == 1:
			idxB = append(idxB, i)
			aSqueeze = append(aSqueeze, len(idxBatch)+len(idxA)+len(aSqueeze))
		case db == 1:
			idxA = append(idxA, i)
			bSqueeze = append(bSqueeze, len(idxBatch)+len(idxB)+len(bSqueeze))
		default: // equal, as BroadcastShapes said
			lhsBatch = append(lhsBatch, len(idxBatch)+len(idxA))
			rhsBatch = append(rhsBatch, len(idxBatch)+len(idxB))
			idxBatch = append(idxBatch, i)
		}
	}
	if aMat {
		idxA = append(idxA, nb)
	}
	if bMat {
		idxB = append(idxB, nb+min(ra-1, 1))
	}
	x, y := squeeze(f, Value{a}, aSqueeze), squeeze(f, Value{b}, bSqueeze)
	rhsContracting := y.Shape().Rank() - 1
	if bMat {
		rhsContracting--
	}
	out := f.DotGeneral(x, y, DotDims{LhsBatch: lhsBatch, RhsBatch: rhsBatch,
		LhsContracting: []int{x.Shape().Rank() - 1}, RhsContracting: []int{rhsContracting}})
	// order[j] is the NumPy output dimension of dot_general's dimension j (the dimensions
	// squeezed on both sides missing); perm = np.argsort(order).
	order := slices.Concat(idxBatch, idxA, idxB)
	perm := make([]int, len(order))
	for j := range perm {
		perm[j] = j
	}
	slices.SortFunc(perm, func(i, j int) int { return order[i] - order[j] })
	if !isIdentity(perm) {
		out = f.Transpose(out, perm...)
	}
	if len(both) > 0 {
		dims := slices.Clone(out.Shape().Dims())
		for _, i := range both {
			dims = slices.Insert(dims, i, 1)
		}
		out = f.Reshape(out, dims...)
	}
	return out
}

// squeeze reshapes x without its dimensions at positions dims (each of size 1).
func squeeze(f *Function, x Value, dims []int) Value {
	if len(dims) == 0 {
		return x
	}
	var keep []int
	for i, d := range x.Shape().Dims() {
		if !slices.Contains(dims, i) {
			keep = append(keep, d)
		}
	}
	return f.Reshape(x, keep...)
}
