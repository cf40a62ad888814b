"""Library-agnostic call helpers a sandbox worker resolves by ``"module:qualname"``.

An argument plan (:mod:`xamt.matching.model`) says how a member is called; for members that are
not plain functions the call goes through one of these helpers:

* :func:`call_method` — a tensor method, called on its receiver (``x.sum(...)``): abstract base
  classes such as ``jax.Array`` cannot be called unbound, so the method is looked up on the
  receiver at call time;
* :func:`call_module` — a callable class (``torch.nn.ReLU``, ``keras.layers.Softmax``):
  construct it with the plan's constructor arguments, then call the instance;
* :func:`call_constructed` — a method of a class constructed from the plan's constructor
  arguments (``torch.distributions.Normal(loc=..., scale=...).log_prob(value)``).

Nothing here imports a library; the target is imported when the helper runs.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import resolve_ref

__all__ = ["call_method", "call_module", "call_constructed", "resolve_ref"]


def call_method(method: str, receiver: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``receiver.<method>(*args, **kwargs)``."""
    return getattr(receiver, method)(*args, **kwargs)


def call_module(target: str, init_kwargs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """Instantiate the class ``target`` with ``init_kwargs`` and call the instance on the inputs."""
    cls = resolve_ref(target)
    return cls(**init_kwargs)(*args, **kwargs)


def call_constructed(target: str, init_kwargs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """``Class(**init_kwargs).method(*args, **kwargs)`` for ``target`` = ``"module:Class.method"``."""
    class_ref, _, method = target.rpartition(".")
    if ":" not in class_ref:
        raise ValueError(f"not a 'module:Class.method' reference: {target!r}")
    instance = resolve_ref(class_ref)(**init_kwargs)
    return getattr(instance, method)(*args, **kwargs)
