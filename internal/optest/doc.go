// Package optest runs the table tests of the helper packages built on the builder (jnp, nn,
// random): each case builds one function of stablehlo.Values with package stablehlo, then
// checks its result shape or its recorded error. It imports stablehlo and testify, and only
// tests import it.
package optest
