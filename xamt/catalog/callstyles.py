"""Records reshaped, in place or as copies, for the way their namespace is called: keyword-only
parameters (``tf.raw_ops``), factories of the computing callable (``jax.nn.initializers``) and
functions filling a tensor made from a shape (``torch.nn.init``)."""
from __future__ import annotations

from xamt.catalog.records import ApiRecord, Param
from xamt.libraries.base import FactoryNamespace, FillNamespace

__all__ = ["keyword_only", "as_factories", "as_fillings"]


def keyword_only(params: list[Param]) -> list[Param]:
    """``params`` of a function that takes keyword arguments only: every named parameter
    ``keyword_only`` (the declaration order is kept)."""
    return [Param(p.name, "keyword_only", p.default, p.required, p.annotation)
            if p.kind in ("positional_only", "positional_or_keyword") else p for p in params]


def as_factories(records: list[ApiRecord], factory: FactoryNamespace) -> None:
    """Turn the function records of a factory namespace (see
    :class:`~xamt.libraries.base.FactoryNamespace`) into ``constructed`` records, in place:
    the function's parameters become the constructor's, the declared call parameters the API's,
    and the target calls the built callable (``module:factory.__call__``)."""
    call_params = [Param(name, kind, default, default is None, annotation)
                   for name, kind, default, annotation in factory.call_params]
    if not call_params:
        return
    call_names = {p.name for p in call_params}
    for rec in records:
        if rec.kind != "function" or rec.namespace != factory.module or rec.sub_api_of:
            continue
        if rec.params and rec.params[0].name == call_params[0].name:
            continue  # already the callable (jax.nn.initializers.zeros(key, shape, dtype))
        rec.kind = "constructed"
        rec.target = f"{rec.target}.__call__"
        rec.init_params = [p for p in rec.params if p.name not in call_names]
        rec.params = list(call_params)
        rec.overloads = []


def as_fillings(records: list[ApiRecord], fill: FillNamespace) -> None:
    """Turn the function records of a fill namespace (see
    :class:`~xamt.libraries.base.FillNamespace`) whose first parameter is the filled tensor into
    ``filling`` records, in place: that parameter becomes a required positional ``shape``."""
    for rec in records:
        if rec.kind != "function" or rec.namespace != fill.module or rec.sub_api_of:
            continue
        if not rec.params or rec.params[0].name != fill.param:
            continue  # not a filling function (torch.nn.init.calculate_gain)
        rec.kind = "filling"
        rec.params = [Param("shape", "positional_only", None, True, "Sequence[int]"),
                      *rec.params[1:]]
        rec.overloads = []
