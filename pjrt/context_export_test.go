package pjrt

// WaitAbandonedCompiles waits until every compilation CompileContext gave up on has ended and
// closed its executable.
func WaitAbandonedCompiles() { abandoned.Wait() }
