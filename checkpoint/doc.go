// Package checkpoint saves trees of jit.Arrays to disk and restores them onto any sharding, in
// the layout JAX writes: jax.experimental.array_serialization's zarr arrays (zarr v2, zstd
// level 1, one chunk per shard) on plain files, which tensorstore, JAX and zarr read.
//
// # Where it sits
//
// checkpoint is above jit: it reads each array's shards to host (jit.Array's buffers), writes
// them as zarr chunks, and builds arrays back with jit.FromCallbackBytes, each device's shard
// from the chunks that overlap it. It knows trees through package tree: a leaf's path
// (".Blocks[1].Wq") becomes the array's name ("Blocks.1.Wq"), as Orbax names a pytree's leaves.
//
// # Layout
//
// A checkpoint is a directory. A tree with one leaf at its root (a lone *jit.Array) is the
// directory itself: the zarr array that serialization.get_tensorstore_spec(dir) opens. Any
// other tree has one zarr array per leaf, dir/<name>/. Each array directory holds .zarray,
// the metadata exactly as tensorstore writes it (compact JSON, keys sorted), and one chunk
// per distinct shard, written by the shard's first replica, named by its chunk coordinates
// ("1.0"; "0" for a scalar).
//
// # No data lost
//
// Save writes into dir.orbax-checkpoint-tmp-<random> beside dir, syncs it, and renames it to
// dir: a save that dies leaves no dir, and the temporary one is what Orbax, too, treats as
// incomplete (Restore refuses it, ErrIncomplete). An existing dir is never overwritten
// (ErrExists): save each step to its own directory. A missing chunk is ErrMissingChunk and a
// chunk that does not decompress to its size is ErrCorrupt, each naming the file; zstd's frame
// checksum, which this package writes, catches changed bytes.
package checkpoint
