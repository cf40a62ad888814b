from xamt.catalog import doc_references, doc_signatures, parse_signature_text


def names(params):
    return [(p.name, p.kind, p.default, p.required) for p in params]


def test_numpy_ufunc_style_text():
    ps = parse_signature_text("x1, x2, /, out=None, *, where=True, dtype=None[, signature]")
    assert names(ps)[:3] == [("x1", "positional_only", None, True),
                             ("x2", "positional_only", None, True),
                             ("out", "positional_or_keyword", "None", False)]
    assert ps[-1].name == "signature" and not ps[-1].required


def test_no_value_defaults_and_optional_annotations():
    ps = parse_signature_text("a, axis=None, keepdims=<no value>")
    assert names(ps)[2] == ("keepdims", "positional_or_keyword", "None", False)
    ps = parse_signature_text("input: Tensor, *, out: Optional[Tensor]")
    assert ps[1].kind == "keyword_only" and not ps[1].required


def test_tuple_of_arrays_placeholder():
    ps = parse_signature_text("(a1, a2, ...), axis=0, out=None")
    assert [p.name for p in ps] == ["arrays", "axis", "out"]


def test_garbage_is_not_a_signature():
    assert parse_signature_text("this is prose, not = a list )(") is None


def test_torch_style_overloads_including_function_directive():
    doc = ("sum(input, *, dtype=None) -> Tensor\n\nReturns the sum.\n\n"
           "    >>> torch.sum(a)\n\n"
           ".. function:: sum(input, dim, keepdim=False, *, dtype=None) -> Tensor\n   :noindex:\n")
    overloads = doc_signatures(doc, "sum")
    assert [[p.name for p in o] for o in overloads] == [
        ["input", "dtype"], ["input", "dim", "keepdim", "dtype"]]


def test_doc_references_equivalence_and_alias():
    refs, equiv, alias = doc_references(
        "Sum of the elements.\n\n  JAX implementation of :func:`numpy.sum`.\n\n"
        "Examples:\n  >>> jnp.cumsum(x)", "jax.numpy.sum")
    assert equiv == ["numpy.sum"] and "jax.numpy.cumsum" not in refs
    _, equiv, _ = doc_references("TensorFlow variant of NumPy's `sum`.", "x")
    assert equiv == ["numpy.sum"]
    _, _, alias = doc_references("absolute(input) -> Tensor\n\nAlias for :func:`torch.abs`", "t")
    assert alias == "torch.abs"
    _, equiv, _ = doc_references("sum(dim=None) -> Tensor\n\nSee :func:`torch.sum`", "t")
    assert equiv == ["torch.sum"]


def test_a_function_set_on_a_class_binds_its_first_parameter_to_the_receiver():
    """paddle sets its functions on ``paddle.Tensor`` (``abs(x, name=None)``): as a method the
    first parameter is the receiver, whatever its name; a staticmethod's is a real argument."""
    from xamt.catalog.mining import mine_library
    from xamt.libraries.base import LibraryAdapter, MethodOwner
    from xamt.libraries.registry import Registry

    lib = LibraryAdapter(
        name="boxes", import_name="tests.catalog.bound_methods", distributions=(), namespaces=(),
        own_modules=("tests.catalog.bound_methods",), from_numpy_ref="xamt.libraries.numpy:from_numpy",
        to_numpy_ref="xamt.libraries.numpy:to_numpy", dtypes={},
        method_owners=(MethodOwner("tests.catalog.bound_methods", "Box"),))
    params = {r.qualname.rsplit(".", 1)[1]: [p.name for p in r.params]
              for r in mine_library(lib, Registry()).records}
    assert params == {"scale": ["factor", "name"], "make": ["x", "fill"], "total": ["axis"]}
