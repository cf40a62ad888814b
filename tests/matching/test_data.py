import shutil

import pytest

from xamt.errors import DataFileError
from xamt.matching.data import data_dir, load_matching_data


def copy_data(tmp_path):
    for f in data_dir().glob("*.toml"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def test_packaged_data_loads_with_a_fingerprint():
    data = load_matching_data()
    assert len(data.aliases) > 200 and data.homonyms and data.overrides
    assert len(data.fingerprint) == 16


def test_missing_file(tmp_path):
    copy_data(tmp_path)
    (tmp_path / "roles.toml").unlink()
    with pytest.raises(DataFileError, match="roles.toml is missing"):
        load_matching_data(tmp_path)


def test_bad_toml(tmp_path):
    copy_data(tmp_path)
    (tmp_path / "aliases.toml").write_text("[aliases\nabs = ")
    with pytest.raises(DataFileError, match="aliases.toml: not valid TOML"):
        load_matching_data(tmp_path)


def test_wrong_types_and_unknown_category(tmp_path):
    copy_data(tmp_path)
    (tmp_path / "aliases.toml").write_text("[aliases]\nabs = 3\n")
    with pytest.raises(DataFileError, match=r"\[aliases\].abs must be a string"):
        load_matching_data(tmp_path)
    copy_data(tmp_path)
    text = (tmp_path / "categories.toml").read_text()
    (tmp_path / "categories.toml").write_text(text + '\n[[override]]\npattern = "x"\ncategory = "nope"\n')
    with pytest.raises(DataFileError, match="neither hard nor soft"):
        load_matching_data(tmp_path)


def test_a_role_name_listed_twice(tmp_path):
    copy_data(tmp_path)
    text = (tmp_path / "roles.toml").read_text()
    (tmp_path / "roles.toml").write_text(text.replace('keepdim = ["keepdim"', 'keepdim = ["dim", "keepdim"'))
    with pytest.raises(DataFileError, match="'dim' has two roles"):
        load_matching_data(tmp_path)


def test_distribution_entries(tmp_path):
    data = load_matching_data()
    assert data.constructed_names["torch.distributions.Normal.log_prob"] == "norm_logpdf"
    assert data.constructed_names["torch.distributions.Poisson.log_prob"] == "poisson_logpmf"
    assert data.constructed_names["torch.distributions.Normal.icdf"] == "norm_ppf"
    assert "torch.distributions.Geometric.log_prob" not in data.constructed_names
    (gamma,) = data.overrides_for("torch.distributions.Gamma.log_prob")
    assert gamma.map == {"concentration": "a", "value": "x"} and gamma.drop == ("rate",)
    assert gamma.fixed == {"validate_args": True, "rate": 1.0}
    copy_data(tmp_path)
    text = (tmp_path / "distributions.toml").read_text()
    (tmp_path / "distributions.toml").write_text(
        text.replace('params = { concentration = "a" }', 'params = { concentration = "a", rate = "scale" }'))
    with pytest.raises(DataFileError, match="both mapped and fixed"):
        load_matching_data(tmp_path)


def test_distribution_variate_and_free_function_names(tmp_path):
    """`variate` renames the scipy variate (multinomial's x of a mass function); `names` gives a
    method the name of a free function (Categorical.entropy is scipy.stats.entropy); `skip`
    keeps layouts and shifted supports out."""
    data = load_matching_data()
    assert data.constructed_names["torch.distributions.Multinomial.log_prob"] == "multinomial_logpmf"
    (mult,) = data.overrides_for("torch.distributions.Multinomial.log_prob")
    assert mult.map == {"total_count": "n", "probs": "p", "value": "x"}
    assert data.constructed_names["torch.distributions.Categorical.entropy"] == "entropy"
    assert data.constructed_names["torch.distributions.Geometric.entropy"] == "geom_entropy"
    assert data.constructed_names["torch.distributions.Wishart.entropy"] == "wishart_entropy"
    for skipped in ("Categorical.log_prob", "Dirichlet.log_prob", "Wishart.log_prob"):
        assert f"torch.distributions.{skipped}" not in data.constructed_names
    copy_data(tmp_path)
    text = (tmp_path / "distributions.toml").read_text()
    (tmp_path / "distributions.toml").write_text(
        text.replace('skip = ["log_prob", "cdf", "icdf"]', 'skip = ["log_prob"]'))
    with pytest.raises(DataFileError, match="needs scipy"):
        load_matching_data(tmp_path)


def test_distribution_samplers_only_for_listed_classes():
    """rsample is matched only for the classes [torch.methods.rsample].classes lists (s11): as
    scipy's `<dist>_rvs`, or the name `names` gives (Exponential at rate 1)."""
    data = load_matching_data()
    names = data.constructed_names
    assert names["torch.distributions.HalfNormal.rsample"] == "halfnorm_rvs"
    assert names["torch.distributions.Wishart.rsample"] == "wishart_rvs"
    assert names["torch.distributions.Exponential.rsample"] == "standard_exponential"
    # Gamma's concentration is numpy.random.gamma's `shape`, not scipy's `a`: not listed
    assert "torch.distributions.Gamma.rsample" not in names
    assert "torch.distributions.Normal.rsample" not in names
    (ig,) = data.overrides_for("torch.distributions.InverseGamma.rsample")
    assert ig.map == {"concentration": "a", "rate": "scale"}


def test_uninitialised_arrays_are_compared_by_status_only():
    from xamt.matching.categories import infer_category

    data = load_matching_data()
    for canonical, ns in (("empty_like", "dask.array"), ("empty", "torch"), ("empty_strided", "torch")):
        category = infer_category(canonical, ns, data)
        assert category == "init" and category in data.status_only_categories, (canonical, category)
    assert infer_category("empty_cache", "torch.cuda", data) != "init"


def test_member_rules_make_distribution_samplers_random():
    """categories.toml [[member]]: a distribution's sampler is category random, its other
    methods stay stats; scipy's sampler takes numpy's or jax's sampler name."""
    from xamt.matching.categories import infer_category
    from xamt.matching.names import canonical_name

    data = load_matching_data()
    assert infer_category("vonmises", "scipy.stats.vonmises", data, "rvs") == "random"
    assert infer_category("vonmises_pdf", "scipy.stats.vonmises", data, "pdf") == "stats"
    assert infer_category("halfnorm_rvs", "torch.distributions", data, "rsample") == "random"
    assert infer_category("norm_logpdf", "torch.distributions", data, "log_prob") == "stats"
    # `rvs` names no sampler outside scipy.stats
    assert infer_category("rvs", "numpy", data, "rvs") != "random"
    for raw, ns, canon in [("vonmises_rvs", "scipy.stats.vonmises", "vonmises"),
                           ("powerlaw_rvs", "scipy.stats.powerlaw", "power"),
                           ("nbinom_rvs", "scipy.stats.nbinom", "negative_binomial"),
                           ("ortho_group_rvs", "scipy.stats.ortho_group", "orthogonal"),
                           ("standard_gamma", "numpy.random", "gamma"),
                           ("halfnorm_rvs", "scipy.stats.halfnorm", "halfnorm_rvs")]:
        assert canonical_name(raw, data, raw.split("_")[0], ns).name == canon, raw
    # numpy.power stays the elementwise power
    assert canonical_name("power", data, "numpy", "numpy").name == "power"


@pytest.mark.parametrize("line, message", [
    ("top_k = 0", "top_k >= 1"),
    ("shortlist = 2", "shortlist >= top_k"),
    ("w_doc = -1", "w_doc must be a number"),
    ("w_doc = \"high\"", "w_doc must be a number"),
    ("extra = 1", "unknown keys"),
])
def test_inferred_settings_are_checked(tmp_path, line, message):
    copy_data(tmp_path)
    path = tmp_path / "matching.toml"
    text = path.read_text()
    key = line.split(" =")[0]
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{key} =")]
    at = lines.index("[inferred]")
    lines.insert(at + 1, line)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFileError, match=message):
        load_matching_data(tmp_path)
