package main

import (
	"flag"
	"fmt"
)

// usageErr is a command-line mistake: main prints it with the command's usage and exits 2, as
// the flag package does for a bad flag.
type usageErr struct {
	fs  *flag.FlagSet
	msg string
}

func (e *usageErr) Error() string { return e.fs.Name() + ": " + e.msg }

// usageError returns a usageErr for the command whose flags are fs.
func usageError(fs *flag.FlagSet, format string, args ...any) error {
	return &usageErr{fs: fs, msg: fmt.Sprintf(format, args...)}
}
