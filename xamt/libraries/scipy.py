"""SciPy adapter (CPU only; arrays are numpy arrays)."""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, ParamSpec, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "distribution_signature", "DISTRIBUTIONS"]

#: distributions of DISTRIBUTIONS whose computational methods are not mined, only their sampler
#: (numpy.random / jax.random draw from them; no other library computes their pdf, cdf, ...)
SAMPLED_ONLY = ("logser", "ncx2", "ncf", "powerlaw", "zipf", "maxwell", "loggamma", "ortho_group")
#: scipy.stats distributions mined as namespaces (their pdf/cdf/... methods): those other
#: installed libraries reimplement (jax.scipy.stats has the same names; torch.distributions'
#: classes are matched to them by xamt/data/distributions.toml)
DISTRIBUTIONS = (
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform",
    "vonmises", "wrapcauchy",
    # torch.distributions has these too (xamt/data/distributions.toml)
    "f", "genpareto", "halfcauchy", "halfnorm", "invgamma", "lognorm", "weibull_min",
    # torch.distributions.Wishart's counterpart
    "wishart",
    # samplers: only their `rvs` is mined
    *SAMPLED_ONLY,
)
#: distributions whose sampler (``rvs``) is mined: those another library samples from with the
#: same parametrisation (numpy.random, jax.random, torch.distributions' ``sample``; the
#: aliases in xamt/data/aliases.toml name their samplers). Not mined, on purpose: lognorm
#: (numpy's lognormal takes the mean and sigma of the log, scipy's scale is exp(mean)),
#: uniform (scipy's [loc, loc + scale], numpy's [low, high)), and the distributions without a
#: sampler elsewhere (betabinom, gumbel_l, wrapcauchy, truncnorm's standardised bounds)
SAMPLED = (
    "beta", "binom", "chi2", "dirichlet", "expon", "f", "gamma", "geom", "gumbel_r", "laplace",
    "logistic", "multinomial", "multivariate_normal", "nbinom", "norm", "poisson", "vonmises",
    "gennorm", "genpareto", "halfcauchy", "halfnorm", "invgamma", "wishart", *SAMPLED_ONLY,
)
#: the computational methods of a distribution (not fit/freeze/expect), and its sampler (rvs)
DISTRIBUTION_METHODS = frozenset({
    "pdf", "logpdf", "pmf", "logpmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "entropy",
})
SAMPLER = "rvs"

_DTYPES = same_dtype_names(("bfloat16",))


def from_numpy(array: Any) -> Any:
    import numpy as np

    return np.array(array, copy=True)


def to_numpy(value: Any) -> Any:
    import numpy as np

    return np.asarray(value)


def distribution_signature(obj: Any, name: str, owner: str | None) -> list[list[ParamSpec]] | None:
    """Signature of a ``scipy.stats`` distribution method, which inspection shows as
    ``(x, *args, **kwds)``: the variate, the distribution's shape parameters, ``loc``/``scale``."""
    dist = getattr(obj, "__self__", None)
    if dist is None or not hasattr(dist, "shapes") or name not in DISTRIBUTION_METHODS | {SAMPLER}:
        return None
    import scipy.stats

    discrete = isinstance(dist, scipy.stats.rv_discrete)
    shapes = [s.strip() for s in (dist.shapes or "").split(",") if s.strip()]
    first: list[ParamSpec] = []
    if name == SAMPLER:
        # rvs(*shapes, loc=0, scale=1, size=1, random_state=None): no variate
        params = [(s, "positional_or_keyword", None, None) for s in shapes]
        params.append(("loc", "positional_or_keyword", "0", None))
        if not discrete:
            params.append(("scale", "positional_or_keyword", "1", None))
        return [params + [("size", "keyword_only", "1", None),
                          ("random_state", "keyword_only", "None", None)]]
    if name in ("ppf", "isf"):
        first = [("q", "positional_or_keyword", None, None)]
    elif name != "entropy":
        first = [("k" if discrete else "x", "positional_or_keyword", None, None)]
    params = first + [(s, "positional_or_keyword", None, None) for s in shapes]
    params.append(("loc", "positional_or_keyword", "0", None))
    if not discrete:
        params.append(("scale", "positional_or_keyword", "1", None))
    return [params]


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="scipy",
        import_name="scipy",
        distributions=("scipy",),
        # scipy.stats distributions (rv_continuous instances) are objects, not functions, and
        # are not mined; their free functions (zscore, entropy, ...) are.
        namespaces=(
            "scipy.special", "scipy.linalg", "scipy.signal", "scipy.signal.windows",
            "scipy.stats", "scipy.fft", "scipy.ndimage", "scipy.spatial.distance",
            "scipy.integrate", "scipy.cluster.vq",
            *(f"scipy.stats.{d}" for d in DISTRIBUTIONS),
        ),
        qualified_parents=("scipy.stats",),
        literal_array="{}", literal_dtype="np.dtype('{}')",
        object_members=DISTRIBUTION_METHODS | {SAMPLER},
        signature_hook_ref="xamt.libraries.scipy:distribution_signature",
        signature_hook_on_variadic=True,
        own_modules=("scipy",),
        from_numpy_ref="xamt.libraries.scipy:from_numpy",
        to_numpy_ref="xamt.libraries.scipy:to_numpy",
        dtype_ref="xamt.libraries.numpy:dtype",
        dtypes=_DTYPES,
        exclude=frozenset({
            "scipy.special.test", "scipy.linalg.test", "scipy.signal.test", "scipy.stats.test",
            "scipy.fft.test", "scipy.ndimage.test", "scipy.integrate.test",
            "scipy.spatial.distance.test",
            # a sampler-only distribution's pdf, cdf, ...; the samplers not listed in SAMPLED
            *(f"scipy.stats.{d}.{m}" for d in SAMPLED_ONLY for m in DISTRIBUTION_METHODS),
            *(f"scipy.stats.{d}.{SAMPLER}" for d in DISTRIBUTIONS if d not in SAMPLED),
        }),
        pivot_rank=10,
        doc_prefixes={"scipy": "scipy"},
    )
