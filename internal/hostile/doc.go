// Package hostile holds xlamesh's hostile-input suite: inputs a careless or hostile caller
// gives the library, through every public entry point, each run where it could crash in a
// child process.
//
// The package has no code of its own; everything is in its tests. TestHostile builds a list of
// cases (hostile_test.go and cases_*_test.go), each an input of one class of issue 10 (names
// that need escaping, programs XLA cannot survive, plugin files, hangs, panics, silently wrong
// results, ownership) through one entry point (mesh.New, wrap.Module, pjrt Compile, jit Call,
// the xlamesh command, ...), with the outcome it must have: an error matching given sentinels
// with errors.Is (and, where the package has one, a typed error with errors.As), or a correct
// result checked value by value.
//
// The cases run in child processes: the test binary re-executes itself with
// XLAMESH_HOSTILE_CHILD naming the cases, and each child reports, case by case, the outcome
// to a file. A child that dies leaves the case it was running unfinished; the parent reads
// its exit status and output and records that case as a signal, a panic or a hang (a watchdog
// in the child ends a case after a time limit, and the parent kills a child that outlives its
// own), then starts a new child for the cases after it. The test fails on every signal, hang
// and panic, and on every error that is not the expected one.
//
//	go test ./internal/hostile                  # the suite
//	go test ./internal/hostile -run 'TestHostile/pure' -v
//	go test ./internal/hostile -update-report   # rewrite the tables of docs/reliability.md
package hostile
