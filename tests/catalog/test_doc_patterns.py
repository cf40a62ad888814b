"""The documentation-reference patterns are built from the adapters' ``doc_prefixes`` and
``doc_possessives``; for today's six libraries they find exactly what the literal patterns that
named the libraries in the catalog found (kept below as the yardstick)."""
import dataclasses
import inspect
import re

import pytest

from xamt.catalog import DocPatterns, doc_body, doc_references
from xamt.errors import ConfigError
from xamt.libraries.registry import Registry

# -- the catalog's patterns before the prefixes became adapter data ---------------------------
_OLD_PREFIXES = {
    "np": "numpy", "numpy": "numpy", "scipy": "scipy", "torch": "torch", "tf": "tensorflow",
    "tensorflow": "tensorflow", "jax": "jax", "jnp": "jax.numpy", "lax": "jax.lax",
    "keras": "keras",
}
_OLD_REF_RE = re.compile(
    r"(?<![\w.])(np|numpy|scipy|torch|tf|tensorflow|jax|jnp|lax|keras)\.([A-Za-z_][\w.]*[A-Za-z0-9_])"
)
_OLD_SEE_RE = re.compile(
    r"^\s*See\s+(?::\w+:)?`*~?((?:np|numpy|scipy|torch|tf|tensorflow|jax|jnp|lax|keras)\.[\w.]*\w)"
)
_OLD_NUMPYS_RE = re.compile(r"NumPy's\s+`+(\w+)`+")
_OLD_ALIAS_RE = re.compile(
    r"\b(?:an\s+)?alias\s+(?:for|of)\s+(?::\w+:)?`*~?((?:np|numpy|scipy|torch|tf|tensorflow|jax|jnp|lax|keras)"
    r"\.[\w.]*\w)",
    re.IGNORECASE,
)
_OLD_EQUIV_RE = re.compile(
    r"(?:implementation of|variant of|equivalent (?:to|of)|same as|alias (?:for|of)|"
    r"wrapper (?:for|around)|counterpart (?:of|to))\s+(?::\w+:)?`*~?"
    r"((?:np|numpy|scipy|torch|tf|tensorflow|jax|jnp|lax|keras)\.[\w.]*\w)",
    re.IGNORECASE,
)

_CORPUS = [
    "JAX implementation of :func:`numpy.sum`.\n\nExamples:\n  >>> jnp.cumsum(x)",
    "TensorFlow variant of NumPy's `sum`.",
    "absolute(input) -> Tensor\n\nAlias for :func:`torch.abs`",
    "sum(dim=None) -> Tensor\n\nSee :func:`torch.sum`",
    "An alias of ~tf.math.add; same as tf.add, equivalent to np.add and jnp.add, "
    "counterpart of lax.add_p, wrapper around keras.ops.add and scipy.special.xlogy.",
    "x.np.sum and a.jax.numpy.sum are not references; np.sum. and jax.lax.cumsum_ are.",
    "Wrapper for `tensorflow.raw_ops.Abs`; tfa.abs, numpyx.sum, jaxlib.xla and kerasx.y are not.",
    "  See ``jax.numpy.linalg.norm`` and See np.linalg.norm",
    "Equivalent to NumPy's ``cumsum`` and NumPy's `prod` (NumPy's cumsum is unquoted).",
    "Same as torch.nn.functional.relu, implementation of scipy.stats.norm.pdf",
]


def _old_qualify(dotted):
    prefix, _, rest = dotted.partition(".")
    return f"{_OLD_PREFIXES[prefix]}.{rest}"


def _corpus():
    import numpy as np

    docs = list(_CORPUS)
    for name in sorted(dir(np)):
        doc = inspect.getdoc(getattr(np, name, None))
        if doc:
            docs.append(doc)
    return docs


def _found(pattern, text, how="finditer"):
    if how == "match":
        return [(m.span(), m.groups()) if m else None
                for m in (pattern.match(line) for line in text.splitlines())]
    return [(m.span(), m.groups()) for m in getattr(pattern, how)(text)]


def _six() -> Registry:
    """The adapters the literal table was written for (later ones add their own prefixes)."""
    full = Registry()
    return Registry([full.get(n) for n in ("numpy", "scipy", "torch", "tensorflow", "jax", "keras")])


def test_the_six_adapters_give_the_literal_prefix_table():
    registry = _six()
    assert registry.doc_prefixes() == _OLD_PREFIXES
    assert registry.doc_possessives() == {"NumPy": "numpy"}


def test_built_patterns_match_what_the_literal_patterns_matched():
    pat = DocPatterns.of(_six())
    docs = _corpus()
    assert len(docs) > 300
    for doc in docs:
        assert _found(pat.ref, doc) == _found(_OLD_REF_RE, doc)
        assert _found(pat.equiv, doc) == _found(_OLD_EQUIV_RE, doc)
        assert _found(pat.alias, doc) == _found(_OLD_ALIAS_RE, doc)
        assert _found(pat.see, doc, "match") == _found(_OLD_SEE_RE, doc, "match")
        assert ([m.span() for m in pat.possessive.finditer(doc)]
                == [m.span() for m in _OLD_NUMPYS_RE.finditer(doc)])
        for m in pat.ref.finditer(doc):
            assert pat.qualify(m.group(0)) == _old_qualify(m.group(0))


def test_doc_references_reads_the_corpus_as_before():
    refs, equiv, alias = doc_references(_CORPUS[4], "own")
    assert alias == "tensorflow.math.add"
    assert equiv == ["tensorflow.math.add", "tensorflow.add", "numpy.add", "jax.lax.add_p",
                     "keras.ops.add"]
    assert "jax.numpy.add" in refs and "scipy.special.xlogy" in refs
    _, equiv, _ = doc_references(_CORPUS[8], "own")
    assert equiv == ["numpy.cumsum", "numpy.prod"]
    refs, _, _ = doc_references(_CORPUS[5], "own")
    assert refs == ["numpy.sum", "jax.lax.cumsum_"]
    assert doc_body(_CORPUS[0]).endswith("`numpy.sum`.\n")


def test_a_case_folded_prefix_is_qualified():
    # the alias and equivalence patterns ignore case: "NP" was matched, then not found
    _, equiv, alias = doc_references("Alias for NP.sum", "own")
    assert alias == "numpy.sum" and equiv == ["numpy.sum"]


def test_a_new_adapters_prefixes_are_picked_up():
    numpy = Registry().get("numpy")
    fake = dataclasses.replace(numpy, name="fakelib", import_name="fakelib",
                               doc_prefixes={"fl": "fakelib", "flx": "fakelib.extra"},
                               doc_possessives={"FakeLib": "fakelib"})
    doc = "Same as fl.thing; see flx.other and FakeLib's `prod`, np.sum."
    assert doc_references(doc, "own")[:2] == (["numpy.sum"], [])
    pat = DocPatterns.of(Registry([*Registry(), fake]))
    refs, equiv, _ = doc_references(doc, "own", pat)
    assert refs == ["fakelib.thing", "fakelib.extra.other", "numpy.sum"]
    assert equiv == ["fakelib.thing", "fakelib.prod"]


def test_a_prefix_with_two_meanings_is_a_config_error():
    numpy = Registry().get("numpy")
    fake = dataclasses.replace(numpy, name="fakelib", doc_prefixes={"np": "fakelib"})
    with pytest.raises(ConfigError, match="'np' means 'numpy' for numpy and 'fakelib' for fakelib"):
        Registry([numpy, fake]).doc_prefixes()


def test_no_prefixes_match_nothing():
    pat = DocPatterns.of(Registry([]))
    assert doc_references("Alias for np.sum, NumPy's `sum`, see torch.abs", "own", pat) == ([], [], None)
