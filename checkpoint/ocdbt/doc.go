// Package ocdbt reads and writes tensorstore's OCDBT key-value store format
// (Optionally-Cooperative Distributed B+Tree) on the local filesystem: the layout of
// {"driver": "ocdbt", "base": "file:///dir/"}, and the one Orbax checkpoints use by default.
// No Go implementation of the format existed; this one follows tensorstore's description
// (tensorstore/kvstore/ocdbt/index.rst) and its codecs (kvstore/ocdbt/format), and is
// checked against databases tensorstore 0.1.86 and orbax-checkpoint 0.12.8 wrote
// (testdata/ocdbt, made by tools/oracle/ocdbt_fixtures.py).
//
// # Where it sits
//
// ocdbt is a key-value store of byte strings and knows nothing of arrays. It sits below
// package checkpoint, which keeps zarr v2 arrays in it as Orbax does: an array "a" is the
// keys "a/.zarray" (its metadata) and "a/0.0", "a/0.1", ... (its chunks).
//
// # Format
//
// A database is a directory. manifest.ocdbt holds the configuration and the version tree:
// the latest versions inline and references to version tree nodes for older ones (or, for
// the numbered manifest kind, manifest.<16 hex digits> files hold it). Each version refers
// to the root of a B+tree; its nodes, and the values too large to store inline in its
// leaves, are byte ranges of data files (d/<32 hex digits>). Nodes refer to data files by
// a base path and a relative path, so a database can refer to files in other directories
// below it, as Orbax's top-level manifest does with ocdbt.process_<i>/d/... Manifests and
// nodes start with a magic number and a length, may be zstd-compressed, and end with a
// CRC-32C checksum; numbers are unsigned LEB128 varints.
//
// # Reading
//
// Open reads the manifest; Get and List read the B+tree of the latest version, node by
// node, from the root to the leaves they need. Versions lists every version the version
// tree holds. Every malformed input is an error naming the file (and byte range) and
// wrapping one of the package's sentinels: ErrMagic, ErrChecksum, ErrTruncated, ErrRange,
// ErrUnsupported, ErrFormat, ErrDepth, ErrMissingFile. Lengths and counts are checked
// against the data that holds them before anything is allocated, a node decompresses to at
// most 64 MiB, and a tree that reaches a node twice is refused.
//
// # Writing
//
// Write makes a new database holding a map of entries as its one version (generation 1),
// as tensorstore's default config would store it: values above max_inline_value_bytes
// (100) in a data file, smaller ones inline in the leaves, nodes split to stay under
// max_decoded_node_bytes (8 MiB) and zstd-compressed, every manifest and node checksummed.
// With WithRandom and WithCommitTime fixed, it writes the same bytes every time.
//
//	err := ocdbt.Write(dir, map[string][]byte{"a/.zarray": meta, "a/0.0": chunk})
//	db, err := ocdbt.Open(dir)
//	chunk, err := db.Get("a/0.0")
//
// # What is not supported
//
// Reading versions other than the latest (Versions only lists them); writing to an
// existing database (Write makes a new one, with one version); several writers at once,
// and tensorstore's cooperative (distributed coordinator) mode; other base key-value
// stores than local files (GCS, S3, ...); B+trees that share a node within one version.
package ocdbt
