package checkpoint

import "errors"

// Errors of the package, matched with errors.Is. Each error names the checkpoint, the array
// and, where there is one, the file.
var (
	// ErrExists: Save's directory exists already (a checkpoint is never overwritten in place).
	ErrExists = errors.New("checkpoint exists")
	// ErrIncomplete: the directory is a save that did not finish (Orbax's and xlamesh's
	// temporary name, *.orbax-checkpoint-tmp*), or it is not there.
	ErrIncomplete = errors.New("checkpoint incomplete")
	// ErrName: a leaf's path makes no array name (a map key that is empty, "." or "..", or
	// holds a path separator), or two leaves make the same name.
	ErrName = errors.New("bad array name")
	// ErrFormat: the metadata is not a zarr array this package reads (another zarr_format,
	// compressor, filter or order), or it is not JSON.
	ErrFormat = errors.New("unsupported checkpoint format")
	// ErrDType: an element type the format cannot hold, or a stored one that is not the
	// restore target's.
	ErrDType = errors.New("unsupported element type")
	// ErrShape: the stored shape is not the one the restore target expects.
	ErrShape = errors.New("shape mismatch")
	// ErrMissingChunk: a chunk file is missing from a layout that always writes every chunk.
	ErrMissingChunk = errors.New("missing chunk")
	// ErrCorrupt: a chunk does not decompress, or decompresses to the wrong size.
	ErrCorrupt = errors.New("corrupt chunk")
)
