import pytest

from xamt.catalog import ApiRecord, LibraryCatalog, build_catalog, load_catalog, mine_library
from xamt.libraries.base import LibraryAdapter
from xamt.libraries.registry import Registry
from xamt.store import Store


@pytest.fixture(scope="module")
def numpy_catalog():
    pytest.importorskip("numpy")
    return mine_library(Registry().get("numpy"))


def by_name(cat: LibraryCatalog) -> dict[str, ApiRecord]:
    return {n: r for r in cat.records for n in r.names}


def test_numpy_functions_methods_and_aliases(numpy_catalog):
    recs = by_name(numpy_catalog)
    counts = numpy_catalog.counts()
    assert counts["function"] > 400 and counts["method"] > 30 and counts["class"] == 0
    # one object under two names is one record with an alias
    assert recs["numpy.abs"] is recs["numpy.absolute"]
    assert recs["numpy.abs"].qualname == "numpy.absolute"  # the object's own __name__ wins
    # tensor methods leave the receiver out and come with their target
    s = recs["numpy.ndarray.sum"]
    assert s.kind == "method" and s.receiver and s.target == "numpy:ndarray.sum"
    assert "keepdims" in [p.name for p in s.params]  # from the docstring, not **kwargs
    assert "numpy.ndarray.tofile" not in recs  # plumbing is not mined
    assert not any(n.split(".")[-1].startswith("_") for n in recs)


def test_numpy_ufunc_signature_and_target(numpy_catalog):
    add = by_name(numpy_catalog)["numpy.add"]
    assert add.target == "numpy:add" and add.signature_source == "inspect"
    assert [p.name for p in add.params][:2] == ["x1", "x2"]


def test_records_round_trip_json(numpy_catalog):
    cat2 = LibraryCatalog.from_json(numpy_catalog.to_json())
    assert cat2.records[10] == numpy_catalog.records[10]


def test_torch_methods_classes_and_signature_sources():
    pytest.importorskip("torch")
    cat = mine_library(Registry().get("torch"))
    recs = by_name(cat)
    assert recs["torch.Tensor.abs_"].kind == "method"
    relu = recs["torch.nn.ReLU"]
    assert relu.kind == "class" and "torch.nn.functional.relu" in relu.functional_forms
    assert "torch.relu_" not in relu.functional_forms  # in-place forms are not functional forms
    assert [p.name for p in relu.init_params] == ["inplace"]
    assert "torch.nn.Sequential" not in recs  # no functional form: not mined
    total = recs["torch.sum"]
    assert [p.name for p in total.params] == ["input", "dim", "keepdim", "dtype"]
    assert any(r.signature_source == "schema" for r in cat.records)  # ATen schema fallback
    assert recs["torch.absolute"].alias_of == "torch.abs"
    assert cat.info["compile"]["label"] == "torch.compile"
    # distribution classes: constructor parameters apart from the method's own
    normal = recs["torch.distributions.Normal.log_prob"]
    assert normal.kind == "constructed" and normal.owner == "Normal"
    assert normal.target == "torch.distributions:Normal.log_prob"
    assert [p.name for p in normal.params] == ["value"]
    assert [p.name for p in normal.init_params] == ["loc", "scale", "validate_args"]
    assert "torch.distributions.Normal.entropy" in recs
    # only methods a class implements: Beta has no cdf (the base's only raises)
    assert "torch.distributions.Beta.cdf" not in recs
    assert "torch.distributions.Distribution.log_prob" not in recs


def test_cache_by_version_and_skip_of_missing_library(tmp_path):
    pytest.importorskip("numpy")
    ghost = LibraryAdapter(name="ghost", import_name="ghost_library_not_installed_xyz",
                           distributions=("ghost",), namespaces=("ghost",), own_modules=("ghost",),
                           from_numpy_ref="x:y", to_numpy_ref="x:y", dtypes={})
    registry = Registry([Registry().get("numpy"), ghost])
    events = []
    with Store(tmp_path / "xamt.db") as store:
        first = build_catalog(store, ["numpy", "ghost"], registry=registry, in_process=True,
                              on_event=lambda k, lib, p: events.append((k, lib)))
        assert "ghost" in first.skipped and "not installed" in first.skipped["ghost"]
        assert not first.catalogs["numpy"].cached
        second = build_catalog(store, ["numpy"], registry=registry, in_process=True)
        assert second.catalogs["numpy"].cached
        assert len(second.catalogs["numpy"].records) == len(first.catalogs["numpy"].records)
        assert set(load_catalog(store)) == {"numpy"}
    assert ("skip", "ghost") in events and ("done", "numpy") in events


def test_worker_process_mining(tmp_path):
    pytest.importorskip("scipy")
    with Store(tmp_path / "xamt.db") as store:
        result = build_catalog(store, ["scipy"])
    cat = result.catalogs["scipy"]
    recs = by_name(cat)
    # a distribution method: an object namespace, qualified for matching, schema from the hook
    pdf = recs["scipy.stats.norm.pdf"]
    assert pdf.target == "scipy.stats:norm.pdf" and pdf.qualifier == "norm"
    assert [p.name for p in pdf.params] == ["x", "loc", "scale"]
    assert "numpy.sin" not in recs  # numpy objects re-exported elsewhere are not scipy's
    # a sampler: the shapes, loc (and scale), then the keyword-only size and random_state
    rvs = recs["scipy.stats.vonmises.rvs"]
    assert [(p.name, p.kind) for p in rvs.params] == [
        ("kappa", "positional_or_keyword"), ("loc", "positional_or_keyword"),
        ("scale", "positional_or_keyword"), ("size", "keyword_only"),
        ("random_state", "keyword_only")]
    assert [p.name for p in recs["scipy.stats.nbinom.rvs"].params] == [
        "n", "p", "loc", "size", "random_state"]  # discrete: no scale
    # a sampler-only distribution: no pdf; a distribution without a sampler elsewhere: no rvs
    assert "scipy.stats.zipf.rvs" in recs and "scipy.stats.zipf.pmf" not in recs
    assert "scipy.stats.uniform.rvs" not in recs and "scipy.stats.uniform.pdf" in recs


def test_foreign_objects_are_those_of_the_libraries_others_reexport():
    import dataclasses

    import numpy as np

    from xamt.catalog.ownership import foreign_objects

    registry = Registry()
    numpy, scipy = registry.get("numpy"), registry.get("scipy")
    assert any(o is np.add for o in foreign_objects(scipy, registry))
    assert foreign_objects(numpy, registry) == []  # a library's own objects are not foreign
    plain = Registry([dataclasses.replace(numpy, reexported_by_others=False), scipy])
    assert foreign_objects(scipy, plain) == []
