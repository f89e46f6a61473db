package refine

import (
	"strconv"
	"strings"
)

// propValue returns the text of entry key of an attribute dictionary's text (props or
// attrs), up to the comma or end that ends it at its own bracket depth, and whether it is
// there. Keys inside nested attributes (#stablehlo.dot<lhs_batching_dimensions = [0], ...>)
// are found too.
func propValue(props, key string) (string, bool) {
	for from := 0; ; {
		i := strings.Index(props[from:], key+" = ")
		if i < 0 {
			return "", false
		}
		i += from
		if i > 0 && !strings.ContainsRune(" <{,", rune(props[i-1])) {
			from = i + len(key)
			continue
		}
		v := props[i+len(key)+3:]
		depth := 0
		for j := 0; j < len(v); j++ {
			switch v[j] {
			case '<', '[', '(', '{':
				depth++
			case '>', ']', ')', '}':
				if v[j] == '>' && j > 0 && v[j-1] == '-' {
					continue // the arrow of a function type or of a convolution's layouts
				}
				if depth == 0 {
					return strings.TrimSpace(v[:j]), true
				}
				depth--
			case ',':
				if depth == 0 {
					return strings.TrimSpace(v[:j]), true
				}
			case '"':
				for j++; j < len(v) && v[j] != '"'; j++ {
					if v[j] == '\\' {
						j++
					}
				}
			}
		}
		return strings.TrimSpace(v), true
	}
}

// propInts reads entry key as a list of integers: array<i64: 1, 2>, [1, 2], dense<[[0, 1]]>
// (flattened), or one integer (3 : i64). ok is false when the entry is missing or not such a
// list.
func propInts(props, key string) ([]int, bool) {
	v, ok := propValue(props, key)
	if !ok {
		return nil, false
	}
	switch {
	case strings.HasPrefix(v, "array<"):
		body := strings.TrimSuffix(strings.TrimPrefix(v, "array<"), ">")
		_, list, found := strings.Cut(body, ":")
		if !found {
			return []int{}, true // array<i64>
		}
		return intList(list)
	case strings.HasPrefix(v, "dense<"):
		return intList(strings.NewReplacer("[", " ", "]", " ").Replace(denseBody(v)))
	case strings.HasPrefix(v, "["):
		return intList(strings.TrimSuffix(strings.TrimPrefix(v, "["), "]"))
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(v, ":", 2)[0]))
	if err != nil {
		return nil, false
	}
	return []int{n}, true
}

// intList reads integers separated by commas or spaces.
func intList(s string) ([]int, bool) {
	out := []int{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// arrayI64 writes integers as array<i64: ...>.
func arrayI64(xs []int) string {
	if len(xs) == 0 {
		return "array<i64>"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "array<i64: " + strings.Join(s, ", ") + ">"
}

// constInts reads the integer contents of a constant op's value (dense<4>, dense<[2, 3]>) for
// a tensor of n elements of an integer or bool element type; ok is false otherwise.
func constInts(props string, t typ) ([]int64, bool) {
	if !t.tensor() || !t.static() || t.size() > maxConst || !(t.dtype == "i1" || strings.HasPrefix(t.dtype, "i") || strings.HasPrefix(t.dtype, "ui")) {
		return nil, false
	}
	v, ok := propValue(props, "value")
	if !ok || !strings.HasPrefix(v, "dense<") {
		return nil, false
	}
	body := denseBody(v)
	var out []int64
	for _, f := range strings.FieldsFunc(body, func(r rune) bool { return strings.ContainsRune("[], ", r) }) {
		switch f {
		case "true":
			out = append(out, 1)
		case "false":
			out = append(out, 0)
		default:
			n, err := strconv.ParseInt(f, 0, 64)
			if err != nil {
				return nil, false
			}
			out = append(out, n)
		}
	}
	switch n := t.size(); len(out) {
	case n:
		return out, true
	case 1:
		s := make([]int64, n)
		for i := range s {
			s[i] = out[0]
		}
		return s, true
	}
	return nil, false
}

// denseBody returns what is between dense< and its matching >: "[2, 3]" of
// "dense<[2, 3]> : tensor<2xi64>".
func denseBody(v string) string {
	body := strings.TrimPrefix(v, "dense<")
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '<':
			depth++
		case '>':
			if depth == 0 {
				return body[:i]
			}
			depth--
		}
	}
	return body
}
