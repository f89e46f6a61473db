// Package gpt is a small GPT language model trained from Go, the JAX twin of
// tools/oracle/gpt.py: a character-level model (token embedding that is also the output
// head, position embedding, pre-norm blocks of causal self-attention and a GELU MLP, a final
// layer norm) trained with AdamW, a warmup + cosine learning rate and global-norm clipping on
// the tiny text in testdata/, data-parallel over the mesh axis "data" and tensor-parallel over
// "model" (attention heads and MLP units split Megatron-style) on a 2x4 mesh.
//
// # Where it sits
//
// It is written the way a user of xlamesh writes a model: parameters as a tree generic in its
// leaves (Params[*jit.Array] on the devices, Params[lower.Value] in the step,
// Params[mesh.PartitionSpec] for the layout), the builder's jnp and nn helpers with NumPy
// broadcasting, gradients with respect to the tree (autodiff.ValueAndGradTree), the
// optimizer from package optim (StepTree, StateSpecs), and one jit.NewTree for the step,
// its state donated by path. gpt.go holds the model and the step (between the BEGIN and END
// markers, compared in length with the twin's by the package's tests); train.go the data,
// the initial parameters, the layout and the loop.
//
// Go and JAX start from the same parameters (a fixed pattern exact in float32) and read the
// same batches; their loss curves agree to 1e-5 (TestTrainMatchesJAX).
package gpt
