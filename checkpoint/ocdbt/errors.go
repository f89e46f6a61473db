package ocdbt

import "errors"

// Errors of the package, matched with errors.Is. Each error names the database file (relative
// to the database directory) and, for a node, the byte range it was read from.
var (
	// ErrNotFound: Get's key is not in the database's latest version.
	ErrNotFound = errors.New("key not found")
	// ErrClosed: the DB was used after Close.
	ErrClosed = errors.New("database closed")
	// ErrExists: Write's directory exists and is not empty.
	ErrExists = errors.New("database exists")
	// ErrMissingFile: the manifest or a data file a node refers to is not there.
	ErrMissingFile = errors.New("missing file")
	// ErrMagic: a manifest, version tree node or B+tree node does not start with its magic
	// number (it is not that kind of OCDBT object).
	ErrMagic = errors.New("bad magic number")
	// ErrChecksum: the CRC-32C checksum at the end of a manifest or node does not match its
	// bytes.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrTruncated: a manifest or node is shorter than its header says, or one of its fields
	// runs past the end of its (decompressed) body.
	ErrTruncated = errors.New("truncated")
	// ErrRange: a reference (offset and length) points past the end of its data file, as it
	// does into a data file cut short.
	ErrRange = errors.New("reference past end of file")
	// ErrUnsupported: a format version, compression method or manifest kind this package
	// does not read.
	ErrUnsupported = errors.New("unsupported")
	// ErrFormat: a field holds a value the format does not allow: a length or count larger
	// than what holds it, keys out of order, a data file index out of range, a height or
	// generation number that does not fit its place, a path that leaves the database.
	ErrFormat = errors.New("malformed")
	// ErrDepth: a tree that is deeper than the format allows, that reaches a node twice (a
	// cycle or shared subtree), or whose node heights do not descend one by one.
	ErrDepth = errors.New("bad tree structure")
)
