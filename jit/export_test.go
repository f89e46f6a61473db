package jit

import "github.com/xlamesh/xlamesh/lower"

// WaitBackground waits until every compilation has ended and the work left running by cancelled
// calls (executions, transfers) has ended and freed its results.
func WaitBackground() { background.Wait() }

// FromTextDropping is FromText for a module that dropped arguments, as jax.export's
// module_kept_var_idx says: callers pass args (their types), the module takes args[kept[i]].
func FromTextDropping(name, text string, args []lower.Shape, kept []int, opts ...Option) (*Function, error) {
	ext, err := readText(name, text)
	if err != nil {
		return nil, err
	}
	ext.args, ext.kept = args, kept
	return newExternal(name, ext, opts), nil
}
