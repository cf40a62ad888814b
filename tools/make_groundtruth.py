"""Regenerate the matching ground truth under ``xamt/data/groundtruth/`` from installed packages.

Two sources, neither written by Xamt's authors:

1. PyTorch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``, which
   also holds the linalg/fft/special/signal OpInfos): every OpInfo whose ``ref=`` is a NumPy or
   SciPy callable gives a (torch API, numpy/scipy API) pair. The ref object is resolved to its
   public qualified names by identity, after unwrapping ``functools.partial`` and ``__wrapped__``;
   lambdas and torch-internal helper functions cannot be resolved and are counted, by kind. The
   torch side is ``torch.<OpInfo name>`` when that is the OpInfo's ``op`` object, else the public
   torch name of ``op`` found by identity. Method, in-place and alias variants of each OpInfo are
   written too (intra-library ground truth).
2. The Python array API standard's function names, from ``array_api_strict.__all__`` (and its
   ``linalg``/``fft`` extensions), as exposed by numpy, torch and jax.numpy: a name present in at
   least two of them gives one cross-library group.

Needs ``expecttest`` (imported by torch's test internals; pinned in setup.py's test extras) and
``array-api-strict`` (pinned in setup.py's runtime dependencies). Usage:
``python tools/make_groundtruth.py [--out xamt/data/groundtruth]``.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

REF_NAMESPACES = (
    "numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.ndarray", "numpy.emath",
    "scipy.special", "scipy.linalg", "scipy.fft", "scipy.signal", "scipy.signal.windows",
    "scipy.stats", "scipy.ndimage", "scipy.spatial.distance", "scipy.integrate",
)
TORCH_NAMESPACES = (
    "torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft",
    "torch.signal.windows", "torch.Tensor",
)


def _resolve_path(path: str) -> Any:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


def _index(namespaces: tuple[str, ...]) -> dict[int, list[str]]:
    """id(object) -> public qualified names, over the given namespaces."""
    index: dict[int, list[str]] = {}
    keep = []
    for ns in namespaces:
        try:
            mod = _resolve_path(ns)
        except (ImportError, AttributeError):
            continue
        for name in dir(mod):
            if name.startswith("_"):
                continue
            try:
                obj = getattr(mod, name)
            except Exception:
                continue
            if inspect.ismodule(obj) or not callable(obj):
                continue
            keep.append(obj)
            index.setdefault(id(obj), []).append(f"{ns}.{name}")
    _index.keep = keep  # type: ignore[attr-defined]  # ids stay valid while objects live
    return index


def _layers(fn: Any) -> list[tuple[Any, str]]:
    """``fn`` and what it wraps (``functools.partial``, ``__wrapped__``), outermost first."""
    layers = [(fn, "direct")]
    for _ in range(4):
        if isinstance(fn, functools.partial):
            fn = fn.func
            layers.append((fn, "partial"))
            continue
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            fn = wrapped
            layers.append((fn, "wrapped"))
            continue
        break
    return layers


def _classify_unresolved(fn: Any) -> str:
    name = getattr(fn, "__name__", "")
    module = getattr(fn, "__module__", "") or ""
    if name == "<lambda>":
        return "lambda"
    if module.startswith("torch"):
        return "torch_internal_helper"
    return "other"


def opinfo_pairs() -> dict[str, Any]:
    t0 = time.perf_counter()
    from torch.testing._internal.common_methods_invocations import op_db
    import torch

    ref_index = _index(REF_NAMESPACES)
    torch_index = _index(TORCH_NAMESPACES)
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    unresolved: dict[str, list[str]] = {}
    intra: list[dict[str, Any]] = []
    n_ref = 0

    def torch_names(op_name: str, obj: Any) -> list[str]:
        try:
            if _resolve_path(f"torch.{op_name}") is obj:
                names = torch_index.get(id(obj), [])
                primary = f"torch.{op_name}"
                return [primary] + [n for n in names if n != primary]
        except (ImportError, AttributeError):
            pass
        return list(torch_index.get(id(obj), []))

    for op in op_db:
        t_names = torch_names(op.name, op.op)
        variants = {
            "method": torch_index.get(id(op.method_variant), []) if op.method_variant else [],
            "inplace": torch_index.get(id(op.inplace_variant), []) if op.inplace_variant else [],
            "aliases": [n for a in op.aliases for n in torch_index.get(id(a.op), [])],
        }
        if t_names and any(variants.values()):
            intra.append({"opinfo": op.name, "variant": op.variant_test_name,
                          "function": t_names, **variants})
        if op.ref is None:
            continue
        n_ref += 1
        label = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        # The first layer that is a public numpy/scipy object: numpy's own functions carry a
        # __wrapped__ implementation, so the outer object is tried before unwrapping.
        r_names, how, fn = [], "direct", op.ref
        for layer, layer_how in _layers(op.ref):
            if ref_index.get(id(layer)):
                r_names, how, fn = ref_index[id(layer)], layer_how, layer
                break
            fn = layer
        if not r_names:
            unresolved.setdefault(_classify_unresolved(fn), []).append(label)
            continue
        if not t_names:
            unresolved.setdefault("torch_side_not_public", []).append(label)
            continue
        key = (t_names[0], r_names[0])
        entry = pairs.setdefault(key, {"opinfo": [], "torch": t_names, "ref": r_names, "how": how})
        entry["opinfo"].append(label)
    return {
        "source": "torch.testing._internal.common_methods_invocations.op_db",
        "torch_version": torch.__version__,
        "numpy_version": metadata.version("numpy"),
        "scipy_version": metadata.version("scipy"),
        "opinfos": len(op_db),
        "opinfos_with_ref": n_ref,
        "pairs": sorted(pairs.values(), key=lambda e: (e["torch"][0], e["ref"][0])),
        "unresolved": {k: sorted(v) for k, v in sorted(unresolved.items())},
        "intra": intra,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def array_api_groups() -> dict[str, Any]:
    import array_api_strict as xps

    names: list[str] = []
    for name in xps.__all__:
        obj = getattr(xps, name, None)
        if inspect.isfunction(obj) or inspect.isbuiltin(obj):
            names.append(name)
    for ext in ("linalg", "fft"):
        mod = getattr(xps, ext)
        for name in getattr(mod, "__all__", []):
            if callable(getattr(mod, name, None)):
                names.append(f"{ext}.{name}")
    libraries = {"numpy": "numpy", "torch": "torch", "jax": "jax.numpy"}
    groups = []
    for name in sorted(set(names)):
        members = {}
        for lib, prefix in libraries.items():
            try:
                obj = _resolve_path(f"{prefix}.{name}")
            except (ImportError, AttributeError):
                continue
            if callable(obj) and not inspect.isclass(obj):
                members[lib] = f"{prefix}.{name}"
        if len(members) >= 2:
            groups.append({"name": name, "members": members})
    return {
        "source": "array_api_strict.__all__ (+ linalg, fft extensions)",
        "array_api_strict_version": metadata.version("array-api-strict"),
        "standard_version": getattr(xps, "__array_api_version__", None),
        "functions": len(set(names)),
        "groups": groups,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1]
                                             / "xamt" / "data" / "groundtruth"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    opinfo = opinfo_pairs()
    (out / "opinfo_refs.json").write_text(json.dumps(opinfo, indent=1) + "\n")
    print(f"opinfo: {len(opinfo['pairs'])} pairs from {opinfo['opinfos_with_ref']} refs; "
          f"unresolved: { {k: len(v) for k, v in opinfo['unresolved'].items()} }")
    api = array_api_groups()
    (out / "array_api.json").write_text(json.dumps(api, indent=1) + "\n")
    print(f"array api: {len(api['groups'])} groups from {api['functions']} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
