"""SciPy adapter (CPU only; arrays are numpy arrays)."""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, ParamSpec, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "distribution_signature", "DISTRIBUTIONS"]

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
    # torch.distributions.Wishart's counterpart (s11)
    "wishart",
)
#: the computational methods of a distribution (not rvs/fit/freeze/expect)
DISTRIBUTION_METHODS = frozenset({
    "pdf", "logpdf", "pmf", "logpmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "entropy",
})

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
    if dist is None or not hasattr(dist, "shapes") or name not in DISTRIBUTION_METHODS:
        return None
    import scipy.stats

    discrete = isinstance(dist, scipy.stats.rv_discrete)
    shapes = [s.strip() for s in (dist.shapes or "").split(",") if s.strip()]
    first: list[ParamSpec] = []
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
        object_members=DISTRIBUTION_METHODS,
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
        }),
        pivot_rank=10,
    )
