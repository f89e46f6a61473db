package checkpoint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/tree"
)

// arrayName returns the name under which the leaf at path is stored: the path's steps joined
// by ".", as Orbax names a pytree's leaves (".Blocks[1].Wq" is "Blocks.1.Wq", `["w"]` is "w").
// The root ("") is "". A map key that is empty, "." or "..", or holds "/" or "\" makes no
// name (ErrName): a name is a directory.
func arrayName(path string) (string, error) {
	var steps []string
	for rest := path; rest != ""; {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			steps = append(steps, rest[1:1+end])
			rest = rest[1+end:]
		case '[':
			if len(rest) > 1 && rest[1] == '"' {
				key, err := strconv.QuotedPrefix(rest[1:])
				if err != nil || !strings.HasPrefix(rest[1+len(key):], "]") {
					return "", fmt.Errorf("%w: path %s", ErrName, path)
				}
				text, _ := strconv.Unquote(key)
				if text == "" || text == "." || text == ".." || strings.ContainsAny(text, "/\\\x00") {
					return "", fmt.Errorf("%w: the map key %s of %s names no directory", ErrName, key, path)
				}
				steps = append(steps, text)
				rest = rest[2+len(key):]
				continue
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return "", fmt.Errorf("%w: path %s", ErrName, path)
			}
			steps = append(steps, rest[1:end])
			rest = rest[end+1:]
		default:
			return "", fmt.Errorf("%w: path %s", ErrName, path)
		}
	}
	return strings.Join(steps, "."), nil
}

// arrayNames returns the names of d's leaves, checking that they are distinct and that a
// root leaf is the only leaf.
func arrayNames(d tree.Def) ([]string, error) {
	paths := d.Paths()
	names := make([]string, len(paths))
	seen := map[string]string{}
	for i, p := range paths {
		n, err := arrayName(p)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[n]; dup {
			return nil, fmt.Errorf("%w: %s and %s are both stored as %q", ErrName, tree.ShowPath(other), tree.ShowPath(p), n)
		}
		seen[n] = p
		names[i] = n
	}
	return names, nil
}
