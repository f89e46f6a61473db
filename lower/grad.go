package lower

import "github.com/xlamesh/xlamesh/autodiff"

// Transpose rules of lower's ops for package autodiff, so that a gradient of a program with
// shardings keeps them: the cotangent of a sharding constraint gets the same constraint.
func init() {
	autodiff.Register("sdy.sharding_constraint", autodiff.SelfTranspose)
}
