"""The oracle's corpus: facts about JAX's sharding surface, written as data.

Each group is a list of plain dicts. generate.py asks JAX 0.8.1 about every
case and writes what JAX answers to testdata/oracle/<group>.json; the Go tests
in internal/oracletest compare xlamesh with those answers.

Cases marked `src` restate a concrete case of an upstream test (JAX's
tests/array_test.py, pjit_test.py, shard_map_test.py, mesh_utils_test.py,
debugging_primitives_test.py; flax's tests/partitioning_test.py) as data; the
others are corners added here. Nothing here is code from those projects.

Encodings shared by every group:
  mesh   {"shape": [4, 2], "names": ["x", "y"], "devices": [ids...]?, "types": ["Auto"|...]?}
         devices are global CPU device ids in mesh (row-major) order; absent
         means iota. types absent means all Auto.
  spec   a list of entries, each None (replicated), "x", ["x", "y"]
         (tuple, major to minor) or "?" (P.UNCONSTRAINED; no corpus mesh has
         an axis named "?").
  error  cases carry "kind" (the xlamesh sentinel they must wrap, see
         internal/oracletest) and "phrases": fragments the JAX message must
         contain (generate.py checks this) and the xlamesh message must
         contain too (the Go tests check that).
"""

U = "?"  # P.UNCONSTRAINED


def M(shape, names, devices=None, types=None):
    m = {"shape": list(shape), "names": list(names)}
    if devices is not None:
        m["devices"] = list(devices)
    if types is not None:
        m["types"] = list(types)
    return m


# Meshes reused by several groups.
M8 = M([8], ["x"])
M42 = M([4, 2], ["x", "y"])
M24 = M([2, 4], ["x", "y"])
M222 = M([2, 2, 2], ["x", "y", "z"])
M22 = M([2, 2], ["x", "y"])
M2 = M([2], ["x"])
M1 = M([1], ["x"])
M412 = M([4, 1, 2], ["x", "one", "y"])
M181 = M([1, 8, 1], ["a", "b", "c"])
M42_PERM = M([4, 2], ["x", "y"], devices=[0, 2, 4, 6, 1, 3, 5, 7])
M42_REV = M([4, 2], ["x", "y"], devices=[7, 6, 5, 4, 3, 2, 1, 0])
M222_PERM = M([2, 2, 2], ["x", "y", "z"], devices=[3, 1, 7, 5, 2, 0, 6, 4])
M22_SUB = M([2, 2], ["x", "y"], devices=[7, 5, 3, 1])
M12 = M([1, 2], ["x", "y"])
M42_EXPL = M([4, 2], ["x", "y"], types=["Explicit", "Explicit"])
M42_MIXED = M([4, 2], ["x", "y"], types=["Explicit", "Auto"])


# ---------------------------------------------------------------------------
# mesh: construction, properties, errors.
MESH = [
    {"name": "1d_8", "mesh": M8},
    {"name": "2d_4x2", "mesh": M42, "src": "array_test.py test_array_2d_shard mesh"},
    {"name": "2d_2x4", "mesh": M24},
    {"name": "3d_2x2x2", "mesh": M222, "src": "array_test.py test_array_getitem_compile_multi_device_sharding mesh"},
    {"name": "size1_single_device", "mesh": M([1], ["x"], devices=[3])},
    {"name": "size1_axis_middle", "mesh": M412},
    {"name": "size1_axes_outer", "mesh": M181},
    {"name": "permuted_transpose", "mesh": M42_PERM},
    {"name": "permuted_reverse", "mesh": M42_REV},
    {"name": "permuted_3d", "mesh": M222_PERM},
    {"name": "subset_devices", "mesh": M22_SUB},
    {"name": "subset_two", "mesh": M([2], ["x"], devices=[1, 2]), "src": "array_test.py test_different_devices_in_arrays_than_sharding"},
    {"name": "types_explicit", "mesh": M42_EXPL},
    {"name": "types_mixed", "mesh": M42_MIXED},
    {"name": "types_manual", "mesh": M([4, 2], ["x", "y"], types=["Manual", "Auto"])},
    {"name": "4d_2x1x2x2", "mesh": M([2, 1, 2, 2], ["a", "b", "c", "d"])},
    {"name": "long_names", "mesh": M([2, 4], ["data", "model"])},
    # str(Mesh) in JAX 0.8.1 always ends with axis_types=(...), all-Auto too;
    # the empty mesh prints as Mesh().
    {"name": "empty", "mesh": M([], [], devices=[])},
    {"name": "err_names_fewer_than_dims", "mesh": M([4, 2], ["x"]), "error": True,
     "kind": "invalid_mesh", "phrases": ["2", "1"]},
    {"name": "err_names_more_than_dims", "mesh": M([8], ["x", "y"]), "error": True,
     "kind": "invalid_mesh", "phrases": ["1", "2"]},
    {"name": "err_types_too_few", "mesh": M([4, 2], ["x", "y"], types=["Auto"]), "error": True,
     "kind": "invalid_mesh", "phrases": ["types"]},
    {"name": "err_types_too_many", "mesh": M([8], ["x"], types=["Auto", "Explicit"]), "error": True,
     "kind": "invalid_mesh", "phrases": ["types"]},
    {"name": "err_device_count", "mesh": M([3, 3], ["x", "y"], devices=[0, 1, 2, 3, 4, 5, 6, 7]), "error": True,
     "kind": "device_count", "phrases": ["8"]},
    # JAX accepts these; see docs/jax-compat.md for xlamesh's choice.
    {"name": "jax_accepts_duplicate_names", "mesh": M([4, 2], ["x", "x"])},
    {"name": "jax_accepts_duplicate_devices", "mesh": M([2, 2], ["x", "y"], devices=[0, 0, 1, 1])},
]

# make_mesh(shape, names): device count check (pjit_test / mesh tests).
MAKE_MESH = [
    {"name": "make_4x2", "shape": [4, 2], "names": ["x", "y"]},
    {"name": "make_4x2_auto", "shape": [4, 2], "names": ["x", "y"], "types": ["Auto", "Auto"]},
    {"name": "make_mixed", "shape": [2, 4], "names": ["x", "y"], "types": ["Explicit", "Auto"]},
    {"name": "make_2x2_takes_prefix", "shape": [2, 2], "names": ["x", "y"]},
    {"name": "make_2x2x2", "shape": [2, 2, 2], "names": ["x", "y", "z"]},
    {"name": "err_make_too_few_devices", "shape": [4, 4], "names": ["x", "y"], "error": True,
     "kind": "device_count", "phrases": ["8", "(4, 4)"]},
    {"name": "err_make_names_mismatch", "shape": [4], "names": ["x", "y"], "error": True,
     "kind": "invalid_mesh", "phrases": ["1", "2"]},
]

# AbstractMesh(sizes, names, types).
ABSTRACT = [
    {"name": "abs_4x2", "mesh": M42},
    {"name": "abs_3d_types", "mesh": M([2, 2, 2], ["x", "y", "z"], types=["Explicit", "Auto", "Manual"])},
    {"name": "abs_size1", "mesh": M([1, 8], ["p", "q"])},
    {"name": "abs_1d", "mesh": M([8], ["x"])},
    {"name": "abs_empty", "mesh": M([], [])},
    {"name": "abs_err_types_len", "mesh": M([4, 2], ["x", "y"], types=["Explicit"]), "error": True,
     "kind": "invalid_mesh", "phrases": ["types"]},
]


# ---------------------------------------------------------------------------
# spec: PartitionSpec canonicalisation and text.
SPEC = [
    {"name": "empty", "spec": []},
    {"name": "one_axis", "spec": ["x"]},
    {"name": "two_axes", "spec": ["x", "y"]},
    {"name": "none_then_axis", "spec": [None, "y"]},
    {"name": "tuple", "spec": [["x", "y"]]},
    {"name": "tuple_reversed", "spec": [["y", "x"]]},
    {"name": "tuple_len1_unwraps", "spec": [["x"]]},
    {"name": "empty_tuple_is_none", "spec": [[], "x"]},
    {"name": "mixed", "spec": ["x", None, ["y", "z"]]},
    {"name": "unconstrained", "spec": [U, "x"]},
    {"name": "trailing_none_kept", "spec": ["x", None, None]},
    {"name": "all_none", "spec": [None, None]},
    {"name": "err_nested_tuple", "spec": [[["x", "y"]]], "error": True,
     "kind": "invalid_spec", "phrases": ["nested tuple"]},
]


# ---------------------------------------------------------------------------
# sharding: NamedSharding geometry on concrete meshes of CPU devices.
# Each case: mesh, spec, shape. Outputs: indices per device (mesh order),
# shard shape, replica ids, is_fully_replicated, GSPMD text, or an error.

def _sharding_cases():
    out = []

    def add(name, mesh, spec, shape, src=None, **kw):
        c = {"name": name, "mesh": mesh, "spec": spec, "shape": shape}
        if src:
            c["src"] = src
        c.update(kw)
        out.append(c)

    at = "array_test.py test_array_2d_shard"
    for n, spec in [("x_y", ["x", "y"]), ("x", ["x"]), ("y", ["y"]), ("none_y", [None, "y"]),
                    ("xy", [["x", "y"]]), ("replicated", [])]:
        add("array2d_" + n, M42, spec, [8, 2], src=at)
    at = "array_test.py test_shard_shape_mismatch_with_buffer_shape"
    for n, spec in [("x_y", ["x", "y"]), ("x", ["x"]), ("y", ["y"]), ("none_y", [None, "y"]),
                    ("none_x", [None, "x"]), ("xy", [["x", "y"]]), ("empty_tuple", [[]])]:
        add("shardshape_" + n, M42, spec, [8, 4], src=at)
    add("getitem_3d_x_y_z", M222, ["x", "y", "z"], [4, 4, 2],
        src="array_test.py test_array_getitem_compile_multi_device_sharding")
    add("mesh_1x2_x_y", M12, ["x", "y"], [8, 2], src="array_test.py test_wrong_num_arrays")
    add("mesh_2_subset_x", M([2], ["x"], devices=[1, 2]), ["x"], [8, 2],
        src="array_test.py test_different_devices_in_arrays_than_sharding")
    add("single_device_x", M([1], ["x"], devices=[1]), ["x"], [8, 2],
        src="array_test.py test_array_iter_mesh_pspec_sharding_single_device")
    add("mesh8_x_16", M8, ["x"], [16], src="array_test.py test_shape_dtype_struct_sharding_jit")
    add("mesh2_x_8", M2, ["x"], [8], src="array_test.py test_array_delete_idempotent")
    add("replicated_none", M42, [None], [8, 2], src="array_test.py test_addressable_data")
    add("pjit_2x2_x", M22, ["x"], [8, 2], src="pjit_test.py test_pjit_basic mesh")
    add("pjit_2x2_x_y", M22, ["x", "y"], [8, 2], src="pjit_test.py test_pjit_in_axis_resources")
    add("pjit_2x2_y_none", M22, ["y", None], [8, 2])
    add("pjit_uneven_3", M([2], ["x"]), ["x"], [3], src="pjit_test.py test_uneven_shard_error",
        error=True, kind="indivisible", phrases=["partitioned 2 times", "3"])
    add("smap_4x2_i_j", M([4, 2], ["i", "j"]), ["i", "j"], [8, 4], src="shard_map_test.py test_identity mesh")
    add("smap_4x2_j", M([4, 2], ["i", "j"]), ["j"], [8, 4])
    add("smap_4x2_ij_tuple", M([4, 2], ["i", "j"]), [["i", "j"]], [8, 4])

    # Grid over meshes x specs x shapes: corners the upstream tests leave implicit.
    grid = [
        ("m8", M8, [([], [8]), (["x"], [8]), (["x"], [16, 3]), ([None, "x"], [2, 8]),
                    (["x", None], [8, 2]), ([U], [8])]),
        ("m42", M42, [(["x"], [4]), (["y"], [4]), ([["y", "x"]], [8, 2]), ([["x", "y"]], [8]),
                      ([["y", "x"]], [16]), ([None, ["x", "y"]], [2, 8]), ([None, ["y", "x"]], [2, 8]),
                      (["y", "x"], [2, 4]), ([None, None], [8, 2]), ([], [3, 5]), ([], []),
                      (["x", None, "y"], [4, 3, 2]), ([None, "x"], [3, 4]), (["y"], [2, 7]),
                      ([U, "y"], [8, 2]), (["x", U], [8, 2]), ([U, U], [3, 5])]),
        ("m24", M24, [(["x", "y"], [4, 8]), (["y", "x"], [8, 4]), (["y"], [8, 2]), ([["x", "y"]], [8, 1]),
                      ([["y", "x"]], [8, 1])]),
        ("m222", M222, [(["x"], [4, 4, 2]), (["y"], [4, 4, 2]), (["z"], [4, 4, 2]),
                        ([["x", "y", "z"]], [8]), ([["z", "y", "x"]], [8]), ([["x", "z"]], [4, 2]),
                        ([["z", "x"]], [4, 2]), ([None, ["y", "z"]], [2, 4]), (["z", "x"], [2, 2]),
                        (["y", None, "x"], [2, 3, 2]), ([], [2, 2, 2]), ([["y", "x"], "z"], [4, 2]),
                        ([["x", "y"], U, "z"], [4, 3, 2])]),
        ("m412", M412, [(["x", "y"], [4, 2]), (["one"], [4]), ([["x", "one"]], [4]), (["one", "y"], [1, 2]),
                        ([["one", "x", "y"]], [8]), (["y", "x"], [2, 4]), ([], [4])]),
        ("m181", M181, [(["b"], [8]), ([["a", "b", "c"]], [8]), (["a", "c"], [3, 5]),
                        (["c", "b"], [1, 8]), ([], [8])]),
        ("m1", M1, [(["x"], [5]), ([], [5]), ([None, "x"], [2, 3])]),
        ("perm", M42_PERM, [(["x", "y"], [8, 2]), (["x"], [8]), (["y"], [8]), ([["x", "y"]], [8]),
                            ([["y", "x"]], [8]), ([], [8]), ([None, "y"], [2, 2]), ([U, "y"], [4, 2])]),
        ("rev", M42_REV, [(["x", "y"], [4, 2]), (["y"], [2]), ([["y", "x"]], [8])]),
        ("perm3d", M222_PERM, [(["x", "y", "z"], [2, 2, 2]), ([["z", "x"]], [4]), (["y"], [2, 6]),
                               ([["x", "y", "z"]], [8])]),
        ("sub", M22_SUB, [(["x", "y"], [2, 2]), (["y"], [4]), ([["y", "x"]], [4]), ([], [3])]),
        ("expl", M42_EXPL, [(["x", "y"], [8, 2]), (["y"], [4])]),
        ("mixed", M42_MIXED, [(["x"], [8, 2]), ([U, "y"], [8, 2])]),
    ]
    for mname, mesh, entries in grid:
        for spec, shape in entries:
            sname = "_".join(("".join(e) if isinstance(e, list) else ("u" if e == U else (e or "none")))
                             for e in spec) or "repl"
            add("%s_%s_%s" % (mname, sname, "x".join(map(str, shape)) or "scalar"), mesh, spec, shape)

    # Error paths.
    add("err_dup_across_dims", M42, ["x", "x"], [8, 2], error=True, kind="duplicate_axis", phrases=["x"],
        src="pjit_test.py test_pjit_duplicate_axis (DuplicateSpecError)")
    add("err_dup_in_tuple", M42, [["x", "x"]], [8], error=True, kind="duplicate_axis", phrases=["x"])
    add("err_dup_tuple_and_dim", M42, [["x", "y"], "x"], [8, 2], error=True, kind="duplicate_axis",
        phrases=["x"])
    add("err_dup_two_axes", M42, ["x", "y", ["x", "y"]], [8, 2, 8], error=True, kind="duplicate_axis",
        phrases=["x", "y"])
    add("err_unknown_axis", M42, ["w"], [8], error=True, kind="unknown_axis", phrases=["w"],
        src="pjit_test.py test_pjit_resource_not_in_mesh")
    add("err_unknown_in_tuple", M42, [["x", "z"]], [8], error=True, kind="unknown_axis", phrases=["z"])
    add("err_unknown_second_dim", M222, [None, "w"], [2, 2], error=True, kind="unknown_axis", phrases=["w"])
    add("err_unconstrained_explicit", M42_EXPL, [U], [8], error=True, kind="unconstrained",
        phrases=["UNCONSTRAINED", "Explicit"])
    add("err_rank_spec_longer", M42, ["x", "y"], [8], error=True, kind="rank",
        phrases=["rank at least 2", "rank 1"])
    add("err_rank_scalar", M42, ["x"], [], error=True, kind="rank",
        phrases=["rank at least 1", "rank 0", "P()"])
    add("err_rank_none_none", M42, [None, None], [8], error=True, kind="rank",
        phrases=["rank at least 2", "rank 1"])
    add("err_rank_3d", M222, ["x", "y", "z"], [2, 2], error=True, kind="rank",
        phrases=["rank at least 3", "rank 2"])
    add("err_indivisible_dim0", M42, ["x", "y"], [6, 2], error=True, kind="indivisible",
        phrases=["axis 0", "partitioned 4 times", "6"])
    add("err_indivisible_dim1", M42, [None, "y"], [8, 3], error=True, kind="indivisible",
        phrases=["axis 1", "partitioned 2 times", "3"])
    add("err_indivisible_tuple", M42, [["x", "y"]], [4], error=True, kind="indivisible",
        phrases=["axis 0", "partitioned 8 times", "4"])
    add("err_indivisible_3d", M222, [["y", "z"]], [2], error=True, kind="indivisible",
        phrases=["axis 0", "partitioned 4 times", "2"])
    add("err_indivisible_perm", M42_PERM, ["y", "x"], [2, 6], error=True, kind="indivisible",
        phrases=["axis 1", "partitioned 4 times", "6"])
    # UNCONSTRAINED is None in JAX 0.8.1's shard geometry (the grid's "u"
    # cases); the other checks still apply around it.
    add("err_rank_unconstrained", M42, [U, "x"], [8], error=True, kind="rank",
        phrases=["rank at least 2", "rank 1"])
    add("err_indivisible_unconstrained", M42, [U, "y"], [8, 3], error=True, kind="indivisible",
        phrases=["axis 1", "partitioned 2 times", "3"])
    add("zero_size_dim", M42, ["x"], [0, 3])
    return out


SHARDING = _sharding_cases()


# ---------------------------------------------------------------------------
# flax: logical_to_mesh_axes(names, rules).
_R1 = [["foo", "data"], ["bar", "model"], ["baz", None]]
_R2 = [["foo", "model"], ["bar", "model"], ["baz", "data"]]
_R3 = [["a", ["model", "replica"]], ["b", ["data", "model"]]]
_R4 = [["baz", "data"], ["bar", None], ["foo", "model"], ["foo", "data"]]
_R5 = [["baz", "data"], ["foo", ["model", "emb"]]]
_PT = "flax partitioning_test.py "
FLAX = [
    {"name": "basic", "rules": _R1, "names": ["foo", "bar"], "src": _PT + "test_logical_to_mesh_axes"},
    {"name": "basic_none_rule", "rules": _R1, "names": ["foo", "bar", "baz"], "src": _PT + "test_logical_to_mesh_axes"},
    {"name": "basic_unknown_name", "rules": _R1, "names": ["foo", "qux"]},
    {"name": "basic_none_name", "rules": _R1, "names": [None, "bar"]},
    {"name": "priorities", "rules": _R2, "names": ["bar", "foo", "baz"], "src": _PT + "test_logical_to_mesh_axes_priorities"},
    {"name": "priorities_swapped", "rules": _R2, "names": ["foo", "bar", "baz"]},
    {"name": "tuple_rules", "rules": _R3, "names": ["a", "b"], "src": _PT + "test_logical_to_mesh_axes_with_tuple_rules"},
    {"name": "tuple_rules_b_only", "rules": _R3, "names": ["b", "c"]},
    {"name": "tuple_rules_b_then_a", "rules": _R3, "names": ["b", "a"]},
    {"name": "none_claims_dim", "rules": [["a", None], ["a", "model"]], "names": ["a", "b"], "src": _PT + "test_logical_to_mesh_axes_overrides"},
    {"name": "overrides", "rules": _R4, "names": ["baz", "bar", "foo"], "src": _PT + "test_logical_to_mesh_axes_overrides"},
    {"name": "unconstrained", "rules": _R5, "names": ["baz", U, "foo"], "src": _PT + "test_logical_to_mesh_axes_unconstrained"},
    {"name": "unconstrained_repeat", "rules": _R5, "names": [U, U, "baz"]},
    {"name": "none_repeat", "rules": _R1, "names": [None, None, "foo"]},
    {"name": "empty_rules", "rules": [], "names": ["foo", "bar"]},
    {"name": "empty_names", "rules": _R1, "names": []},
    {"name": "same_mesh_axis_first_wins", "rules": [["a", "x"], ["b", "x"]], "names": ["b", "a"]},
    {"name": "rule_order_not_name_order", "rules": [["b", "x"], ["a", "x"]], "names": ["a", "b"]},
    {"name": "tuple_blocked_whole", "rules": [["a", "y"], ["b", ["x", "y"]], ["b", "x"]], "names": ["a", "b"]},
    {"name": "tuple_none_inside", "rules": [["a", ["x", None]]], "names": ["a"]},
    {"name": "err_duplicate_name", "rules": _R1, "names": ["foo", "foo"], "error": True,
     "kind": "rule", "phrases": ["foo"], "src": _PT + "test_logical_to_mesh_axes_errors"},
    {"name": "err_rules_not_sequence", "rules": "foo", "names": ["foo"], "error": True,
     "kind": "rule", "phrases": ["rule"]},
]


# flax_constraint: nn.with_logical_constraint(x, names, rules, mesh, fallback)
# inside jit on a 4x2 ('data', 'model') mesh; JAX's answer is the
# sdy.sharding_constraint it lowers to (or none).
M_DM = M([4, 2], ["data", "model"])
_RD = [["foo", "data"], ["bar", "model"]]
FLAX_CONSTRAINT = [
    {"name": "matched_unsharded", "rules": _RD, "names": ["foo", "bar"], "fallback": "AXIS_IS_UNSHARDED", "shape": [8, 4]},
    {"name": "matched_raise", "rules": _RD, "names": ["foo", "bar"], "fallback": "RAISE_ERROR", "shape": [8, 4]},
    {"name": "matched_no_constraint", "rules": _RD, "names": ["foo", "bar"], "fallback": "NO_CONSTRAINT", "shape": [8, 4]},
    {"name": "unmatched_unsharded", "rules": _RD, "names": ["foo", "not_recognized"], "fallback": "AXIS_IS_UNSHARDED",
     "shape": [8, 4], "src": _PT + "test_with_logical_constraint fallback"},
    {"name": "unmatched_no_constraint", "rules": _RD, "names": ["foo", "not_recognized"], "fallback": "NO_CONSTRAINT",
     "shape": [8, 4]},
    {"name": "err_unmatched_raise", "rules": _RD, "names": ["foo", "not_recognized"], "fallback": "RAISE_ERROR",
     "shape": [8, 4], "error": True, "kind": "rule", "phrases": ["not_recognized", "did not match a rule"]},
    {"name": "empty_rules", "rules": [], "names": ["foo", "bar"], "fallback": "AXIS_IS_UNSHARDED", "shape": [8, 4]},
    {"name": "names_none", "rules": _RD, "names": None, "fallback": "AXIS_IS_UNSHARDED", "shape": [8, 4]},
    {"name": "unconstrained_name", "rules": _RD, "names": ["foo", U], "fallback": "AXIS_IS_UNSHARDED", "shape": [8, 4]},
    {"name": "tuple_rule", "rules": [["foo", ["data", "model"]]], "names": ["foo", "bar"], "fallback": "AXIS_IS_UNSHARDED",
     "shape": [8, 4]},
    {"name": "rule_to_none", "rules": [["foo", None], ["bar", "data"]], "names": ["foo", "bar"], "fallback": "RAISE_ERROR",
     "shape": [8, 4]},
]


# ---------------------------------------------------------------------------
# mesh_utils: create_device_mesh / create_hybrid_device_mesh on fake TPU-like
# devices (topology described as data: chips x*y*z, host blocks of 2x2x1,
# cores per chip, slices, reversed order), and on the 8 real CPU devices.
def T(x, y, z, kind, cores=1, slices=1, reverse=False):
    return {"chips": [x, y, z], "kind": kind, "cores": cores, "slices": slices, "reverse": reverse}


def G(ids, kind="NVIDIA H100 80GB HBM3", processes=1):
    """GPUs listed in the order of ids, split evenly over processes in that order."""
    return {"gpus": list(ids), "kind": kind, "processes": processes}


_MU = "mesh_utils_test.py "
MESH_UTILS = [
    {"name": "v3_2x2_ring8", "topo": T(2, 2, 1, "TPU v3", cores=2), "shape": [8], "src": _MU + "test_v3_create_device_mesh 2x2_1d",
     "expect_ids": [0, 1, 2, 3, 6, 7, 4, 5]},
    {"name": "v3_2x2_2x4", "topo": T(2, 2, 1, "TPU v3", cores=2), "shape": [2, 4], "src": _MU + "test_v3_create_device_mesh 2x2_2d",
     "expect_ids": [0, 1, 2, 3, 6, 7, 4, 5]},
    {"name": "v3_4x4_4x8", "topo": T(4, 4, 1, "TPU v3", cores=2), "shape": [4, 8], "src": _MU + "test_v3_create_device_mesh 4x4_2d",
     "expect_ids": [0, 1, 2, 3, 10, 11, 8, 9, 4, 5, 6, 7, 14, 15, 12, 13,
                    16, 17, 18, 19, 26, 27, 24, 25, 20, 21, 22, 23, 30, 31, 28, 29]},
    {"name": "v3_2x2_4x2", "topo": T(2, 2, 1, "TPU v3", cores=2), "shape": [4, 2]},
    {"name": "v4_2x2x1_1x1x4", "topo": T(2, 2, 1, "TPU v4"), "shape": [1, 1, 4], "src": _MU + "test_create_device_mesh_for_nd_torus 2x2x1"},
    {"name": "v4_2x2x1_4", "topo": T(2, 2, 1, "TPU v4"), "shape": [4], "expect_ids": [0, 2, 1, 3]},
    {"name": "v4_2x2x1_2x2", "topo": T(2, 2, 1, "TPU v4"), "shape": [2, 2]},
    {"name": "v4_2x2x4_1x4x4", "topo": T(2, 2, 4, "TPU v4"), "shape": [1, 4, 4], "src": _MU + "test_create_device_mesh_for_nd_torus 2x2x4"},
    {"name": "v4_4x4x4_1x16x4", "topo": T(4, 4, 4, "TPU v4"), "shape": [1, 16, 4], "src": _MU + "test_create_device_mesh_for_nd_torus 4x4x4"},
    {"name": "v4_4x4x8_1x16x8", "topo": T(4, 4, 8, "TPU v4"), "shape": [1, 16, 8], "src": _MU + "test_create_device_mesh_for_nd_torus 4x4x8a"},
    {"name": "v4_4x4x8_1x8x16", "topo": T(4, 4, 8, "TPU v4"), "shape": [1, 8, 16], "src": _MU + "test_create_device_mesh_for_nd_torus 4x4x8b"},
    {"name": "v4_4x4x8_16x8x1", "topo": T(4, 4, 8, "TPU v4"), "shape": [16, 8, 1], "src": _MU + "test_create_device_mesh_for_nd_torus 4x4x8c"},
    {"name": "v4_4x8x8_1x32x8", "topo": T(4, 8, 8, "TPU v4"), "shape": [1, 32, 8], "src": _MU + "test_create_device_mesh_for_nd_torus 4x8x8"},
    {"name": "v4_8x8x8_1x64x8", "topo": T(8, 8, 8, "TPU v4"), "shape": [1, 64, 8], "src": _MU + "test_create_device_mesh_for_nd_torus 8x8x8"},
    {"name": "v4_2x2x4_reversed", "topo": T(2, 2, 4, "TPU v4", reverse=True), "shape": [4, 4], "src": _MU + "test_get_physical_tpu_mesh reorder"},
    {"name": "v4_4x4x4_contiguous", "topo": T(4, 4, 4, "TPU v4"), "shape": [16, 4], "contiguous_submeshes": True,
     "src": _MU + "test_create_contiguous_submeshes_for_tpu_v4"},
    {"name": "err_v4_two_cores_per_chip", "topo": T(2, 2, 1, "TPU v4", cores=2), "shape": [8], "error": True,
     "kind": "no_assignment", "phrases": ["one device per chip"]},
    {"name": "v5e_2x2_4", "topo": T(2, 2, 1, "TPU v5 lite"), "shape": [4]},
    {"name": "v5e_2x2_2x2", "topo": T(2, 2, 1, "TPU v5 lite"), "shape": [2, 2]},
    {"name": "v5e_2x4_8", "topo": T(2, 4, 1, "TPU v5 lite"), "shape": [8]},
    {"name": "v5e_2x4_2x4", "topo": T(2, 4, 1, "TPU v5 lite"), "shape": [2, 4]},
    {"name": "v5e_4x4_16", "topo": T(4, 4, 1, "TPU v5 lite"), "shape": [16]},
    {"name": "v5e_4x4_4x4", "topo": T(4, 4, 1, "TPU v5 lite"), "shape": [4, 4]},
    {"name": "v5p_2x2x2_8", "topo": T(2, 2, 2, "TPU v5p"), "shape": [8]},
    {"name": "v5p_2x2x2_2x2x2", "topo": T(2, 2, 2, "TPU v5p"), "shape": [2, 2, 2]},
    {"name": "split_needed_4x4x4_2x32", "topo": T(4, 4, 4, "TPU v4"), "shape": [2, 32], "allow_split_physical_axes": True},
    # GPUs: JAX 0.11 and later sort them by id before reshaping (JAX 0.8.1
    # kept the given order; xlamesh's mesh.GPUsInGivenOrder).
    {"name": "gpu_2procs_interleaved_2x4", "topo": G([0, 2, 4, 6, 1, 3, 5, 7], processes=2), "shape": [2, 4],
     "expect_ids": [0, 1, 2, 3, 4, 5, 6, 7]},
    {"name": "gpu_reversed_8", "topo": G([7, 6, 5, 4, 3, 2, 1, 0]), "shape": [8],
     "expect_ids": [0, 1, 2, 3, 4, 5, 6, 7]},
    {"name": "cpu_8_4x2", "cpu": True, "shape": [4, 2]},
    {"name": "cpu_8_2x2x2", "cpu": True, "shape": [2, 2, 2]},
    {"name": "err_count", "cpu": True, "shape": [3, 3], "error": True, "kind": "device_count",
     "phrases": ["8", "(3, 3)"]},
    {"name": "err_no_assignment", "topo": T(4, 4, 4, "TPU v4"), "shape": [2, 32], "error": True,
     "kind": "no_assignment", "phrases": ["32"], "src": _MU + "(Failed to find assignment)"},
    {"name": "err_contiguous_topology", "topo": T(4, 4, 8, "TPU v4"), "shape": [1, 16, 8], "contiguous_submeshes": True,
     "error": True, "kind": "no_assignment", "phrases": ["contiguous submeshes", "(4, 4, 8)"],
     "src": _MU + "test_create_contiguous_submeshes_errors"},
    {"name": "err_contiguous_shape", "topo": T(4, 8, 8, "TPU v4"), "shape": [1, 128, 2], "contiguous_submeshes": True,
     "error": True, "kind": "no_assignment", "phrases": ["contiguous submeshes", "(1, 128, 2)"],
     "src": _MU + "test_create_contiguous_submeshes_errors"},
]

HYBRID = [
    {"name": "v4_2slices_2x2_1x2", "topo": T(2, 2, 1, "TPU v4", slices=2), "shape": [2, 2], "dcn": [1, 2],
     "expect_ids": [0, 1, 4, 5, 2, 3, 6, 7]},
    {"name": "v4_2slices_2x2_2x1", "topo": T(2, 2, 1, "TPU v4", slices=2), "shape": [2, 2], "dcn": [2, 1]},
    {"name": "v4_4x4x4_2slices_a", "topo": T(4, 4, 4, "TPU v4", slices=2), "shape": [1, 16, 4], "dcn": [2, 1, 1],
     "src": _MU + "test_create_hybrid_device_mesh 2X4x4x4a"},
    {"name": "v4_4x4x4_2slices_b", "topo": T(4, 4, 4, "TPU v4", slices=2), "shape": [1, 4, 16], "dcn": [1, 2, 1],
     "src": _MU + "test_create_hybrid_device_mesh 2X4x4x4b"},
    {"name": "err_slice_count", "topo": T(2, 2, 1, "TPU v4", slices=2), "shape": [2, 2], "dcn": [1, 4], "error": True,
     "kind": "device_count", "phrases": ["2"]},
]


# ---------------------------------------------------------------------------
# visualize: jax.debug.visualize_sharding(shape, sharding, use_color=False).
_DP = "debugging_primitives_test.py "
VISUALIZE = [
    {"name": "1d_8_x", "mesh": M8, "spec": ["x"], "shape": [8], "src": _DP + "test_visualize_sharding_1d"},
    {"name": "1d_8_replicated", "mesh": M8, "spec": [], "shape": [8], "src": _DP + "test_visualize_fully_replicated"},
    {"name": "1d_2_x", "mesh": M2, "spec": ["x"], "shape": [8]},
    {"name": "2d_4x2_x_y", "mesh": M42, "spec": ["x", "y"], "shape": [8, 8], "src": _DP + "test_visualize_sharding_2d"},
    {"name": "2d_4x2_x", "mesh": M42, "spec": ["x"], "shape": [8, 8]},
    {"name": "2d_4x2_none_y", "mesh": M42, "spec": [None, "y"], "shape": [8, 8]},
    {"name": "2d_4x2_y_x", "mesh": M42, "spec": ["y", "x"], "shape": [8, 8]},
    {"name": "2d_4x2_xy", "mesh": M42, "spec": [["x", "y"]], "shape": [8, 8]},
    {"name": "2d_4x2_none_xy", "mesh": M42, "spec": [None, ["x", "y"]], "shape": [8, 8]},
    {"name": "2d_4x2_replicated", "mesh": M42, "spec": [], "shape": [8, 8]},
    {"name": "2d_4x2_wide", "mesh": M42, "spec": ["x", "y"], "shape": [8, 32]},
    {"name": "2d_4x2_tall", "mesh": M42, "spec": ["x", "y"], "shape": [32, 8]},
    {"name": "2d_perm_x_y", "mesh": M42_PERM, "spec": ["x", "y"], "shape": [8, 8]},
    {"name": "2d_perm_y", "mesh": M42_PERM, "spec": ["y"], "shape": [8, 8]},
    {"name": "2d_2x2_sub", "mesh": M22_SUB, "spec": ["x", "y"], "shape": [4, 4]},
    {"name": "2d_3d_mesh_xy_z", "mesh": M222, "spec": [["x", "y"], "z"], "shape": [8, 4]},
    {"name": "2d_4x2_unconstrained_y", "mesh": M42, "spec": [U, "y"], "shape": [8, 8]},
    # Tables wider than max_width=80: rich shrinks the columns. A label that
    # no longer fits wraps between words and is cut with "…" ("C…" over "3…");
    # one left no room by its padding vanishes, and its row is only padding.
    {"name": "2d_2x4_none_y_label_cut", "mesh": M24, "spec": [None, "y"], "shape": [16, 64]},
    {"name": "2d_1x8_none_y_label_gone", "mesh": M([1, 8], ["x", "y"]), "spec": [None, "y"], "shape": [3, 64]},
    {"name": "err_rank3", "mesh": M222, "spec": ["x"], "shape": [2, 2, 2], "error": True,
     "kind": "unsupported", "phrases": ["and 2"]},
]


# ---------------------------------------------------------------------------
# lowering: jax.jit(f, in_shardings, out_shardings).lower(...) on 8 CPU devices,
# plus the numbers it computes for x = arange(prod(shape)) (integer-valued).
# "program" names a function in generate.py's PROGRAMS table; args give the
# shape, dtype and spec of each argument; "out" the result spec.
def A(shape, spec, dtype="f32"):
    return {"shape": shape, "spec": spec, "dtype": dtype}


LOWERING = [
    {"name": "elementwise_x_y", "program": "mul2", "mesh": M42, "args": [A([8, 2], ["x", "y"])],
     "out": ["x", "y"], "src": "array_test.py test_shape_dtype_struct_sharding_pjit"},
    {"name": "elementwise_x", "program": "mul2", "mesh": M42, "args": [A([8, 2], ["x"])], "out": ["x"]},
    {"name": "elementwise_replicated", "program": "mul2", "mesh": M42, "args": [A([8, 2], [])], "out": []},
    {"name": "elementwise_perm_mesh", "program": "mul2", "mesh": M42_PERM, "args": [A([8, 2], ["x", "y"])],
     "out": ["x", "y"]},
    {"name": "elementwise_3d_xy_z", "program": "mul2", "mesh": M222, "args": [A([8, 2], [["x", "y"], "z"])],
     "out": [["x", "y"], "z"]},
    {"name": "elementwise_yx_tuple", "program": "mul2", "mesh": M42, "args": [A([8, 2], [["y", "x"]])],
     "out": [["y", "x"]]},
    {"name": "elementwise_mixed_types_x", "program": "mul2", "mesh": M42_MIXED, "args": [A([8, 2], ["x"])],
     "out": ["x"]},
    {"name": "elementwise_mixed_types_repl", "program": "mul2", "mesh": M42_MIXED, "args": [A([8, 2], [])],
     "out": []},
    {"name": "elementwise_explicit_y", "program": "mul2", "mesh": M42_EXPL, "args": [A([8, 2], [None, "y"])],
     "out": [None, "y"]},
    {"name": "add_i32", "program": "add", "mesh": M42,
     "args": [A([8, 4], ["x"], "i32"), A([8, 4], [None, "y"], "i32")], "out": ["x", "y"]},
    {"name": "matmul_batch", "program": "matmul", "mesh": M42, "args": [A([8, 4], ["x", None]), A([4, 2], [])],
     "out": ["x", None]},
    {"name": "matmul_model", "program": "matmul", "mesh": M42, "args": [A([8, 4], []), A([4, 2], [None, "y"])],
     "out": [None, "y"]},
    {"name": "matmul_2d", "program": "matmul", "mesh": M42,
     "args": [A([8, 4], ["x", None]), A([4, 2], [None, "y"])], "out": ["x", "y"]},
    {"name": "matmul_contracting", "program": "matmul", "mesh": M42,
     "args": [A([8, 4], [None, "x"]), A([4, 2], ["x", None])], "out": []},
    {"name": "matmul_replicated", "program": "matmul", "mesh": M42, "args": [A([8, 4], []), A([4, 2], [])],
     "out": []},
    {"name": "reduce_sum_sharded_axis", "program": "sum0", "mesh": M42, "args": [A([8, 4], ["x", "y"])],
     "out": ["y"]},
    {"name": "reduce_sum_all", "program": "sum_all", "mesh": M42, "args": [A([8, 4], ["x", "y"])], "out": []},
    {"name": "wsc_mid", "program": "wsc_none_y", "mesh": M42, "args": [A([8, 2], ["x", None])], "out": []},
    {"name": "wsc_unconstrained", "program": "wsc_x_u", "mesh": M42, "args": [A([8, 2], [])], "out": []},
    {"name": "shard_map_psum", "program": "smap_psum_x", "mesh": M42, "args": [A([8, 2], ["x", None])],
     "out": [], "src": "shard_map_test.py test_all_gather/psum style"},
    {"name": "shard_map_psum_2d", "program": "smap_psum_xy", "mesh": M42, "args": [A([8, 4], ["x", "y"])],
     "out": [None, "y"]},
]

LOWERING += [
    {"name": "elementwise_subset_mesh", "program": "mul2", "mesh": M22_SUB, "args": [A([4, 2], ["x", "y"])],
     "out": ["x", "y"]},
    {"name": "matmul_perm_3d", "program": "matmul", "mesh": M222_PERM,
     "args": [A([8, 4], [["x", "y"], None]), A([4, 2], [None, "z"])], "out": [["x", "y"], "z"]},
    {"name": "shard_map_partial_manual", "program": "smap_psum_x_partial", "mesh": M42, "args": [A([8, 2], ["x", None])],
     "out": [], "src": "shard_map_test.py (axis_names subset: partial manual)"},
    {"name": "shard_map_3d_psum_tuple", "program": "smap_psum_xy_tuple", "mesh": M222, "args": [A([8, 4], [["x", "y"], "z"])],
     "out": [None, "z"]},
    {"name": "shard_map_all_gather", "program": "smap_all_gather_x", "mesh": M42, "args": [A([8, 2], ["x", None])],
     "out": [], "src": "shard_map_test.py test_all_gather"},
]

# The same programs lowered for XLA's GSPMD partitioner (jax_use_shardy_partitioner=False):
# mhlo.sharding strings instead of sdy attributes.
LOWERING += [dict(c, name="gspmd_" + c["name"], partitioner="gspmd") for c in LOWERING if c["name"] in (
    "elementwise_x_y", "elementwise_perm_mesh", "elementwise_3d_xy_z", "matmul_2d", "matmul_batch",
    "reduce_sum_sharded_axis", "wsc_mid", "shard_map_psum")]

# Errors jit / with_sharding_constraint / shard_map raise while lowering.
LOWERING += [
    {"name": "err_jit_arg_indivisible", "program": "mul2", "mesh": M42, "args": [A([6, 2], ["x"])], "out": ["x"],
     "error": True, "kind": "indivisible", "phrases": ["4", "6"], "src": "pjit_test.py test_uneven_shard_error"},
    {"name": "err_jit_arg_rank", "program": "mul2", "mesh": M42, "args": [A([8], ["x", "y"])], "out": [],
     "error": True, "kind": "rank", "phrases": ["rank at least 2", "rank 1"]},
    {"name": "err_jit_out_indivisible", "program": "sum0", "mesh": M42, "args": [A([8, 3], ["x"])], "out": ["x"],
     "error": True, "kind": "indivisible", "phrases": ["4", "3"]},
    {"name": "err_jit_out_rank", "program": "sum_all", "mesh": M42, "args": [A([8, 2], [])], "out": ["x"],
     "error": True, "kind": "rank", "phrases": ["rank at least 1", "rank 0"]},
    {"name": "err_wsc_rank", "program": "wsc_none_y", "mesh": M42, "args": [A([8], [])], "out": [],
     "error": True, "kind": "lower_sharding", "phrases": ["rank"]},
    {"name": "err_shard_map_indivisible", "program": "smap_psum_x", "mesh": M42, "args": [A([2, 2], [])], "out": [],
     "error": True, "kind": "lower_indivisible", "phrases": ["4", "2"], "src": "shard_map_test.py (not evenly divisible)"},
    {"name": "err_shard_map_rank", "program": "smap_psum_xy", "mesh": M42, "args": [A([8], [])], "out": [],
     "error": True, "kind": "lower_sharding", "phrases": ["rank"], "src": "shard_map_test.py (which has rank 1)"},
]


# ---------------------------------------------------------------------------
# multiprocess: a mesh over several processes, seen from each one (which shards
# it holds, the process-local shape it loads and gathers, the global shape JAX
# infers from it, and which local elements each of its devices gets from
# make_array_from_process_local_data). Devices are simulated as a TPU slice or
# GPU hosts report them ("topo" as in mesh_utils); "order" "create" lays them
# out with mesh_utils.create_device_mesh, "perm" puts the listing's device
# perm[k] at mesh position k, else they go in listing order.
def MP(name, topo, mesh_shape, names, spec, shape, order="listing", **kw):
    return dict({"name": name, "topo": topo, "mesh_shape": list(mesh_shape), "names": list(names),
                 "spec": list(spec), "shape": list(shape), "order": order}, **kw)


_V4_2HOSTS = T(2, 2, 2, "TPU v4")            # 2 hosts x 4 chips
_V4_4HOSTS = T(1, 2, 4, "TPU v4")            # 4 hosts x 2 chips
_V4_8HOSTS = T(1, 1, 8, "TPU v4")            # 8 hosts x 1 chip
_GPU_4PROCS = G(range(8), processes=4)       # 4 processes x 2 GPUs
_GPU_4PROCS_PERM = G([0, 5, 2, 7, 4, 1, 6, 3], processes=4)
_GPU_8PROCS = G(range(8), processes=8)
_MP_SRC = "sharding_impls.py local_to_global_shape docstring "
MULTIPROCESS = [
    # 2 processes.
    MP("v4_2procs_x", _V4_2HOSTS, [2, 4], ["x", "y"], ["x"], [8, 4], order="create"),
    MP("v4_2procs_y", _V4_2HOSTS, [2, 4], ["x", "y"], ["y"], [8, 4], order="create"),
    MP("v4_2procs_xy", _V4_2HOSTS, [2, 4], ["x", "y"], [["x", "y"]], [8, 4], order="create"),
    MP("v4_2procs_x_y", _V4_2HOSTS, [2, 4], ["x", "y"], ["x", "y"], [4, 8], order="create"),
    MP("v4_2procs_y_x", _V4_2HOSTS, [2, 4], ["x", "y"], ["y", "x"], [8, 4], order="create"),
    MP("v4_2procs_replicated", _V4_2HOSTS, [2, 4], ["x", "y"], [], [8, 4], order="create"),
    MP("v4_2procs_listing_yx", _V4_2HOSTS, [4, 2], ["x", "y"], [None, ["y", "x"]], [2, 8]),
    # 4 processes: the examples of JAX's local_to_global_shape docstring ({'a': 2, 'b': 2,
    # 'c': 2}, two devices per host) and more.
    MP("doc_abc_none", _GPU_4PROCS, [2, 2, 2], ["a", "b", "c"], [], [4, 6], src=_MP_SRC + "P()"),
    MP("doc_abc_0", _GPU_4PROCS, [2, 2, 2], ["a", "b", "c"], [["a", "b", "c"], None], [16, 6], src=_MP_SRC + "P(('a', 'b', 'c'), None)"),
    MP("doc_ab_0", _GPU_4PROCS, [2, 2, 2], ["a", "b", "c"], [["a", "b"], None], [16, 6], src=_MP_SRC + "P(('a', 'b'), None)"),
    MP("doc_ac_1", _GPU_4PROCS, [2, 2, 2], ["a", "b", "c"], [None, ["a", "c"]], [4, 8], src=_MP_SRC + "P(None, ('a', 'c'))"),
    MP("doc_ac_b", _GPU_4PROCS, [2, 2, 2], ["a", "b", "c"], [["a", "c"], "b"], [8, 6], src=_MP_SRC + "P(('a', 'c'), 'b')"),
    MP("doc_permuted_a_bc", _GPU_4PROCS, [2, 2, 2], ["a", "b", "c"], ["a", ["b", "c"]], [4, 8],
       perm=[0, 1, 2, 4, 3, 5, 6, 7], src=_MP_SRC + "permuted devices, P('a', ('b', 'c')): (None, None)"),
    MP("permuted_bc_only", _GPU_4PROCS, [2, 2, 2], ["a", "b", "c"], ["a", ["b", "c"]], [4, 8],
       perm=[0, 1, 2, 3, 4, 6, 5, 7]),
    MP("v4_4procs_x", _V4_4HOSTS, [4, 2], ["x", "y"], ["x"], [8, 2]),
    MP("v4_4procs_y", _V4_4HOSTS, [4, 2], ["x", "y"], ["y"], [8, 2]),
    MP("v4_4procs_y_x", _V4_4HOSTS, [4, 2], ["x", "y"], ["y", "x"], [4, 8]),
    MP("gpu_4procs_x_y", _GPU_4PROCS, [2, 4], ["x", "y"], ["x", "y"], [4, 8], order="create"),
    MP("gpu_4procs_perm_xy", _GPU_4PROCS_PERM, [4, 2], ["x", "y"], [["x", "y"]], [16, 2]),
    # 8 processes, one device each.
    MP("v4_8procs_x", _V4_8HOSTS, [8], ["x"], ["x"], [16]),
    MP("v4_8procs_2x4_x_y", _V4_8HOSTS, [2, 4], ["x", "y"], ["x", "y"], [4, 8]),
    MP("v4_8procs_2x4_y", _V4_8HOSTS, [2, 4], ["x", "y"], [None, "y"], [4, 8]),
    MP("gpu_8procs_replicated", _GPU_8PROCS, [4, 2], ["x", "y"], [], [3, 5]),
    # Process-local data that fits neither the global shape nor the process's part.
    MP("err_local_shape", _V4_2HOSTS, [2, 4], ["x", "y"], ["x"], [8, 4], order="create",
       process=1, local=[3, 4], error=True, kind="process_data",
       phrases=["Invalid host data", "In dimension 0, the process data has 3 elements", "Process addresses 4 elements"]),
]

GROUPS = {
    "mesh": MESH, "make_mesh": MAKE_MESH, "abstract_mesh": ABSTRACT, "spec": SPEC,
    "sharding": SHARDING, "flax": FLAX, "flax_constraint": FLAX_CONSTRAINT, "mesh_utils": MESH_UTILS, "hybrid_mesh": HYBRID,
    "visualize": VISUALIZE, "lowering": LOWERING,
    "multiprocess": MULTIPROCESS,
}
