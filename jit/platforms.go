package jit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
)

// A module exported for several platforms takes the platform's index in Exported.Platforms as
// a first argument, %arg0: tensor<i32> {jax.global_constant = "_platform_index"}. xlamesh binds
// it: the argument becomes a constant marked by platformMarker in the module's text (so that
// re-sharding sees only the exported function's arguments), and compile writes the index of
// the client's platform into it.
const (
	platformArgAttr = `{jax.global_constant = "_platform_index"}`
	platformMarker  = `<{value = dense<0> : tensor<i32>}> {xlamesh.platform_index}`
)

// bindPlatformArg removes the platform-index argument of text's @main and defines it as a marked
// constant at the top of @main's body.
func bindPlatformArg(name, text string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("jit: %s: %w: the module of several platforms: "+format, append([]any{name, ErrExternal}, args...)...)
	}
	s := mlir.NewScanner(text)
	var prev mlir.Token
	for t := s.Next(); t.Kind != mlir.EOF; prev, t = t, s.Next() {
		if !t.Is(mlir.AtIdent, "@main") || !prev.Is(mlir.Ident, "public") && !prev.Is(mlir.Ident, "func.func") {
			continue
		}
		d := s.Depth()
		open := s.Next()
		if !open.Is(mlir.Punct, "(") {
			return fail("@main has no argument list")
		}
		arg := s.Next()
		if arg.Kind != mlir.PercentIdent {
			return fail("@main takes no platform index")
		}
		argName := arg.Text
		attrAt := strings.Index(text[arg.End():], platformArgAttr)
		if attrAt < 0 || strings.TrimSpace(text[arg.End():arg.End()+attrAt]) != ": tensor<i32>" {
			return fail("@main's first argument %s is not its platform index", argName)
		}
		cut := arg.End() + attrAt + len(platformArgAttr)
		cutTo := mlir.SkipSpace(text, cut)
		if cutTo < len(text) && text[cutTo] == ',' {
			cutTo = mlir.SkipSpace(text, cutTo+1)
		}
		// The body: the first '{' at @main's depth, outside the argument and result lists,
		// that does not open the attributes dictionary.
		var before mlir.Token
		for b := s.Next(); b.Kind != mlir.EOF; before, b = b, s.Next() {
			if b.Is(mlir.Punct, "{") && s.Depth() == d+1 && !before.Is(mlir.Ident, "attributes") {
				if b.Off < cutTo {
					break
				}
				def := "\n    " + argName + ` = "stablehlo.constant"() ` + platformMarker + " : () -> tensor<i32>"
				return text[:arg.Off] + text[cutTo:b.End()] + def + text[b.End():], nil
			}
		}
		return fail("@main has no body")
	}
	if err := s.Err(); err != nil {
		return fail("%v", err)
	}
	return fail("no @main")
}

// bindPlatformIndex writes the platform index into the constant bindPlatformArg marked.
func bindPlatformIndex(text string, index int) string {
	return strings.Replace(text, platformMarker, "<{value = dense<"+strconv.Itoa(index)+"> : tensor<i32>}>", 1)
}
