// Package oracletest holds xlamesh's differential oracle tests: it compares
// xlamesh with answers JAX itself gave for the same cases.
//
// # Where the answers come from
//
// tools/oracle/cases.py states a corpus of cases as data; tools/oracle/generate.py
// asks JAX (the pinned oracle venv, 8 CPU devices) about each one and writes
// testdata/oracle/<group>.json. Those goldens are checked in; `make oracle`
// rewrites them and `make oracle-check` (tools/oracle/check.sh) fails when a
// regeneration differs from what is checked in.
//
// # What is compared
//
// The tests in this package read the goldens and compare with xlamesh:
// mesh properties, PartitionSpec canonical forms, NamedSharding geometry
// (devices' index ranges, shard shape, replica ids, full replication, the
// GSPMD sharding text), flax-style logical axis rules, mesh creation from
// TPU-like devices, sharding visualisation, and lowered StableHLO modules.
// Errors are compared by kind (the mesh sentinel the xlamesh error must wrap)
// and by key phrases that both messages must contain.
//
// Every disagreement found is either a test failure, or listed in known_test.go
// as a deliberate difference or an open issue reported to the owning package,
// pinned to the exact JAX and xlamesh values it shows (compare_test.go plants
// differences to prove the comparators report them);
// docs/jax-compat.md is generated from the run:
//
//	go test ./internal/oracletest -update-report
//
// The package has no non-test code besides this comment; it exists only for
// its tests.
package oracletest
