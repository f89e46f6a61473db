package mlir

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CheckSharding reports whether text, the value of an mhlo.sharding attribute (XLA's
// HloSharding text, e.g. "{devices=[4,2]<=[8]}"), is one XLA parses and survives on
// partitions devices (0 when the count is not known). XLA's own reader drops a sharding it
// cannot parse without a word, and aborts the process on some it can (a negative tile
// dimension, a transpose that is not a permutation, last_tile_dim_replicate together with
// last_tile_dims). The error is an *Error wrapping ErrSharding, whose message gives the byte
// offset within text.
//
// The grammar is that of XLA's HloParserImpl::ParseSharding: {replicated}, {manual},
// {unknown}, {unreduced}, {maximal device=N}, {devices=[d,...]i,j,...} and its iota form
// {devices=[d,...]<=[r,...]T(p,...)}, each with optional last_tile_dim_replicate or
// last_tile_dims={manual, replicated, unreduced}, shard_as N / shard_like N and metadata={...},
// and tuples {{...}, {...}}. Beyond parsing, a tile assignment must name each device once,
// from 0 to its size minus 1, and its size must be partitions when that is known. The newer
// named form ({mesh[...], [...]}) is not accepted.
func CheckSharding(text string, partitions int) error {
	_, err := parseHloSharding(text, partitions)
	if err != nil {
		return &Error{Kind: ErrSharding, Off: -1, What: Quote(text), Msg: err.Error()}
	}
	return nil
}

// shardingKinds are the keywords naming a sharding's kind, in the order XLA's parser gives
// them precedence.
var shardingKinds = [...]string{"replicated", "maximal", "manual", "unknown", "unreduced"}

// hloSharding is what the checker needs to know of a parsed sharding.
type hloSharding struct {
	manual bool // {manual}, or a tiled sharding with a manual subgroup
	tuple  []hloSharding
	// tiles are a tiled sharding's tiles per data dimension (its tile assignment without the
	// subgroup dimensions); nil for the other kinds, which give every device the whole shape.
	tiles []int
}

// hloParser reads XLA's HLO sharding text: tokens are { } [ ] ( ) , = <= integers (with an
// optional '-'), keywords, and "strings" (in metadata only).
type hloParser struct {
	src        string
	pos        int
	partitions int
}

type hloError struct {
	off int
	msg string
}

func (e *hloError) Error() string { return fmt.Sprintf("at byte %d: %s", e.off, e.msg) }

func parseHloSharding(text string, partitions int) (s hloSharding, err error) {
	p := &hloParser{src: text, partitions: partitions}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*hloError)
			if !ok {
				panic(r)
			}
			s, err = hloSharding{}, e
		}
	}()
	s = p.sharding()
	if p.skip(); p.pos < len(p.src) {
		p.fail("unexpected %s after the sharding", p.describe())
	}
	return s, nil
}

func (p *hloParser) fail(format string, args ...any) {
	panic(&hloError{off: p.pos, msg: fmt.Sprintf(format, args...)})
}

func (p *hloParser) skip() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\n\r", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *hloParser) peek() byte {
	p.skip()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *hloParser) accept(s string) bool {
	p.skip()
	if strings.HasPrefix(p.src[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *hloParser) expect(s string) {
	if !p.accept(s) {
		p.fail("expected %q, found %s", s, p.describe())
	}
}

func (p *hloParser) describe() string {
	p.skip()
	if p.pos >= len(p.src) {
		return "end of text"
	}
	if w := p.peekWord(); w != "" {
		return strconv.Quote(w)
	}
	return strconv.Quote(p.src[p.pos : p.pos+1])
}

func (p *hloParser) peekWord() string {
	p.skip()
	end := p.pos
	for end < len(p.src) && (isLetter(p.src[end]) || p.src[end] == '_' || end > p.pos && isDigit(p.src[end])) {
		end++
	}
	return p.src[p.pos:end]
}

// int reads a decimal integer that fits int64.
func (p *hloParser) int() int {
	p.skip()
	start := p.pos
	if p.pos < len(p.src) && p.src[p.pos] == '-' {
		p.pos++
	}
	p.pos = scanWhile(p.src, p.pos, isDigit)
	n, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
	if err != nil {
		p.pos = start
		p.fail("expected an integer, found %s", p.describe())
	}
	return int(n)
}

// ints reads INT (',' INT)*.
func (p *hloParser) ints() []int {
	v := []int{p.int()}
	for p.accept(",") {
		v = append(v, p.int())
	}
	return v
}

// sharding reads '{' (single | tuple) '}'.
func (p *hloParser) sharding() hloSharding {
	p.expect("{")
	if c := p.peek(); c == '{' || c == '}' {
		var s hloSharding
		if p.accept("}") {
			return s // empty tuple
		}
		for {
			p.expect("{")
			s.tuple = append(s.tuple, p.single())
			if !p.accept(",") {
				break
			}
		}
		p.expect("}")
		return s
	}
	return p.single()
}

// single reads the body of one non-tuple sharding after its '{', through its '}'.
func (p *hloParser) single() hloSharding {
	start := p.pos
	if w := p.peekWord(); w == "mesh" || w == "maximal_mesh" {
		p.fail("the named sharding form is not supported")
	}
	var (
		kw                   [len(shardingKinds)]bool // which kind keywords appear
		devices, tileDims    []int
		haveDevice, explicit bool
		iotaDims, perm       []int
		subgroups            []string
		lastTileDimReplicate bool
		lastTileDims         bool
	)
	for !p.accept("}") {
		if p.pos >= len(p.src) {
			p.fail("expected '}' to end the sharding")
		}
		w := p.peekWord()
		switch w {
		case "maximal", "replicated", "manual", "unknown", "unreduced":
			p.pos += len(w)
			kw[slices.Index(shardingKinds[:], w)] = true
			continue
		case "last_tile_dim_replicate":
			p.pos += len(w)
			lastTileDimReplicate = true
			continue
		case "shard_as", "shard_like":
			p.pos += len(w)
			p.int()
			continue
		case "":
			p.fail("unexpected %s in sharding", p.describe())
		}
		p.pos += len(w)
		if !p.accept("=") {
			p.pos -= len(w)
			p.fail("unexpected %s in sharding", p.describe())
		}
		switch w {
		case "device":
			devices, haveDevice = []int{p.int()}, true
		case "devices":
			p.expect("[")
			tileDims = p.ints()
			p.expect("]")
			if p.accept("<=") {
				p.expect("[")
				iotaDims = p.ints()
				p.expect("]")
				if len(iotaDims) == 1 {
					perm = []int{0}
				} else {
					if p.peekWord() != "T" {
						p.fail("expected 'T(' after an iota tile assignment of rank %d", len(iotaDims))
					}
					p.pos++
					p.expect("(")
					perm = p.ints()
					p.expect(")")
				}
			} else {
				devices, explicit = p.ints(), true
			}
		case "last_tile_dims":
			p.expect("{")
			for {
				t := p.peekWord()
				switch t {
				case "manual", "replicated", "unreduced":
				default:
					p.fail("unknown subgroup type %s in last_tile_dims", p.describe())
				}
				p.pos += len(t)
				subgroups = append(subgroups, t)
				if !p.accept(",") {
					break
				}
			}
			p.expect("}")
			lastTileDims = true
		case "metadata":
			p.skipMetadata()
		default:
			p.pos -= len(w) + 1
			p.fail("unknown attribute %q in sharding: expected device=, devices=, metadata= or last_tile_dims=", w)
		}
	}
	end := p.pos
	p.pos = start // errors below point at the start of the sharding
	// The first kind keyword in XLA's order wins, as in XLA's parser.
	for i, kind := range shardingKinds {
		if !kw[i] {
			continue
		}
		if kind == "maximal" {
			if !haveDevice || explicit || tileDims != nil {
				p.fail("maximal shardings should have exactly one device assigned (device=N)")
			}
			p.checkDevice(devices[0])
		} else if haveDevice || tileDims != nil {
			p.fail("%s shardings should not have any devices assigned", kind)
		}
		p.pos = end
		return hloSharding{manual: kind == "manual"}
	}
	if tileDims == nil || haveDevice && !explicit {
		p.fail("non-maximal shardings must have a tile assignment list including dimensions")
	}
	n := 1
	for i, d := range tileDims {
		if d < 1 {
			p.fail("tile assignment dimension %d is %d, want >= 1", i, d)
		}
		if n > math.MaxInt32/d {
			p.fail("tile assignment %v has more than %d devices", tileDims, math.MaxInt32)
		}
		n *= d
	}
	if p.partitions > 0 && n != p.partitions {
		p.fail("tile assignment %v has %d devices, for %d partitions", tileDims, n, p.partitions)
	}
	if lastTileDimReplicate && lastTileDims {
		p.fail("last_tile_dim_replicate and last_tile_dims together")
	}
	if lastTileDimReplicate {
		subgroups = []string{"replicated"}
	}
	if len(subgroups) > len(tileDims) {
		p.fail("%d subgroup types for %d tile dimensions", len(subgroups), len(tileDims))
	}
	if explicit {
		if len(devices) != n {
			p.fail("tile assignment %v needs %d devices, got %d", tileDims, n, len(devices))
		}
		seen := make(map[int]bool, len(devices))
		for _, d := range devices {
			if d < 0 || d >= n {
				p.fail("device %d out of range [0, %d) in tile assignment", d, n)
			}
			if seen[d] {
				p.fail("device %d appears twice in tile assignment", d)
			}
			seen[d] = true
		}
	} else {
		m := 1
		for i, d := range iotaDims {
			if d < 1 || m > math.MaxInt32/d {
				p.fail("iota reshape dimension %d is %d, want >= 1 and %v to have %d devices", i, d, iotaDims, n)
			}
			m *= d
		}
		if m != n {
			p.fail("iota reshape %v has %d devices, tile assignment %v has %d", iotaDims, m, tileDims, n)
		}
		if len(perm) != len(iotaDims) {
			p.fail("transpose T%v has %d entries for iota reshape %v", perm, len(perm), iotaDims)
		}
		seen := make([]bool, len(perm))
		for _, q := range perm {
			if q < 0 || q >= len(perm) || seen[q] {
				p.fail("transpose T%v is not a permutation of 0..%d", perm, len(perm)-1)
			}
			seen[q] = true
		}
	}
	p.pos = end
	manual := false
	for _, t := range subgroups {
		manual = manual || t == "manual"
	}
	return hloSharding{manual: manual, tiles: tileDims[:len(tileDims)-len(subgroups)]}
}

func (p *hloParser) checkDevice(d int) {
	if d < 0 || p.partitions > 0 && d >= p.partitions {
		p.fail("device %d out of range for %d partitions", d, p.partitions)
	}
}

// skipMetadata skips a metadata value: a {...} block, whose strings may hold any brackets.
func (p *hloParser) skipMetadata() {
	p.skip()
	if p.peek() != '{' {
		p.fail("expected '{' after metadata=")
	}
	depth := 0
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '"':
			for p.pos++; p.pos < len(p.src) && p.src[p.pos] != '"'; p.pos++ {
				if p.src[p.pos] == '\\' {
					p.pos++
				}
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				p.pos++
				return
			}
		}
		p.pos++
	}
	p.fail("metadata is never closed")
}
