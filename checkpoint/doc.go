// Package checkpoint saves trees of jit.Arrays to disk and restores them onto any sharding, in
// the layouts JAX writes on plain files, which tensorstore, JAX and zarr read:
// jax.experimental.array_serialization's zarr v2 arrays (ZarrV2, the default: zstd level 1,
// one chunk per shard) and JAX's zarr3 arrays (Zarr3: raw chunks, chunks of zeros not written).
//
// # Where it sits
//
// checkpoint is above jit: it reads each array's shards (jit.Array's buffers), writes them as
// zarr chunks, and builds arrays back with jit.FromCallbackInto, each device's shard from the
// chunks that overlap it. Where device memory is host memory (CPU), Save compresses the shards
// straight from the devices' memory (pjrt.Client.ReadInPlace) and Restore decompresses a
// chunk that is a shard straight into the memory its device then uses
// (pjrt.HostTransfer.Fill): neither copies the arrays whole, as JAX's serialization does not
// on CPU. SaveAsync copies the shards to host first, so that it can return before writing. It knows trees through package tree: a leaf's path
// (".Blocks[1].Wq") becomes the array's name ("Blocks.1.Wq"), as Orbax names a pytree's leaves.
//
// # Layout
//
// A checkpoint is a directory. A tree with one leaf at its root (a lone *jit.Array) is the
// directory itself: the zarr array that serialization.get_tensorstore_spec(dir) opens. Any
// other tree has one zarr array per leaf, dir/<name>/. Each array directory holds its
// metadata exactly as tensorstore writes it for JAX (compact JSON, keys sorted: .zarray for
// zarr v2, zarr.json for zarr3) and its chunks, written by each shard's first replica and
// named by their grid coordinates ("1.0" and "0" for a scalar in zarr v2; "c/1/0" and "c" in
// zarr3). A zarr v2 chunk is a shard; a zarr3 chunk is a shard too unless the shard is over
// 2.2 GB, which JAX splits (tensorstore_impl._compute_chunk_shape). Restore reads either
// format, whichever shard shapes it was written with, uncompressed or zstd chunks, "." or "/"
// between coordinates.
//
// WithFormat(Orbax) writes, and Restore and Info also read, Orbax's default layout (orbax-checkpoint's StandardCheckpointer
// and PyTreeCheckpointer with use_ocdbt): the same zarr v2 arrays kept as keys
// ("params.w/.zarray", "params.w/0.0") of an OCDBT database at the checkpoint's root
// (package checkpoint/ocdbt), whose shards Orbax splits across their replicas. Orbax names a
// leaf by its keys joined with ".", as this package does, so a flat map keyed "params.w"
// restores it leaf by leaf. Orbax restores what this package writes, with a target tree or
// without one (from _METADATA, which splits each name at "." into dictionary keys).
//
// # No data lost
//
// Save writes into dir.orbax-checkpoint-tmp-<random> beside dir, syncs it, and renames it to
// dir: a save that dies leaves no dir, and the temporary one is what Orbax, too, treats as
// incomplete (Restore refuses it, ErrIncomplete). An existing dir is never overwritten
// (ErrExists): save each step to its own directory. A missing zarr v2 chunk (JAX writes them
// all) is ErrMissingChunk, a missing zarr3 chunk the fill value, zero; a chunk that does not
// decompress to its size is ErrCorrupt, each naming the file; zstd's frame checksum, which
// this package writes, catches changed bytes (raw zarr3 chunks have no checksum).
//
// # Across processes
//
// In a job of several processes (package distributed), every process calls Save with
// WithJob(job), the same directory on a shared file system and a tree of the same structure:
// each writes the chunks of the shards whose first replica it holds, process 0 the metadata,
// and process 0 commits once every process has reported its part written through the job's
// store; a process lost mid-save fails the save everywhere and nothing is committed. Restore
// needs nothing more: each process reads the chunks of its own devices' shards.
package checkpoint
