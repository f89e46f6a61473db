package jit

// WaitBackground waits until every compilation has ended and the work left running by cancelled
// calls (executions, transfers) has ended and freed its results.
func WaitBackground() { background.Wait() }
