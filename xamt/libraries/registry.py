"""Discovery of library adapters.

Every module of the :mod:`xamt.libraries` package other than the helpers listed in
``_NOT_ADAPTERS`` is an adapter module exposing ``adapter() -> LibraryAdapter``. Adding a library
is adding such a module; nothing else lists libraries.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Iterable, Iterator

from xamt.errors import ConfigError, UnknownLibraryError
from xamt.libraries.base import LibraryAdapter

__all__ = ["Registry", "parse_library_list"]

_NOT_ADAPTERS = frozenset({"base", "registry", "invoke"})
#: order used when the user does not give one (cheap, reference libraries first)
_PREFERRED_ORDER = ("numpy", "scipy", "torch", "tensorflow", "jax", "keras")


class Registry:
    """The adapters available in this installation of Xamt (not a singleton: build one per use)."""

    def __init__(self, adapters: Iterable[LibraryAdapter] | None = None):
        if adapters is None:
            adapters = _discover()
        self._adapters: dict[str, LibraryAdapter] = {}
        for adapter in adapters:
            if adapter.name in self._adapters:
                raise ConfigError(f"two adapters claim the library name {adapter.name!r}")
            self._adapters[adapter.name] = adapter

    def names(self) -> list[str]:
        """Adapter names, reference libraries first."""
        known = list(self._adapters)
        ranked = [n for n in _PREFERRED_ORDER if n in self._adapters]
        return ranked + sorted(n for n in known if n not in ranked)

    def get(self, name: str) -> LibraryAdapter:
        try:
            return self._adapters[name]
        except KeyError:
            raise UnknownLibraryError(name, list(self._adapters)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._adapters

    def __iter__(self) -> Iterator[LibraryAdapter]:
        return (self._adapters[n] for n in self.names())

    def doc_prefixes(self) -> dict[str, str]:
        """Every adapter's ``doc_prefixes`` in one table (``jnp`` -> ``jax.numpy``).

        Documentation of one library names the others' APIs, so the table is the registry's,
        not one adapter's. A prefix two adapters give different meanings is a ConfigError.
        """
        return self._merged("doc_prefixes")

    def doc_possessives(self) -> dict[str, str]:
        """Every adapter's ``doc_possessives`` in one table (``NumPy`` -> ``numpy``), checked
        as :meth:`doc_prefixes` is."""
        return self._merged("doc_possessives")

    def _merged(self, attribute: str) -> dict[str, str]:
        merged: dict[str, str] = {}
        owner: dict[str, str] = {}
        for adapter in self:
            for key, value in getattr(adapter, attribute).items():
                if merged.setdefault(key, value) != value:
                    raise ConfigError(f"{attribute}: {key!r} means {merged[key]!r} for "
                                      f"{owner[key]} and {value!r} for {adapter.name}")
                owner.setdefault(key, adapter.name)
        return merged


def _discover() -> list[LibraryAdapter]:
    import xamt.libraries as pkg

    found = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name in _NOT_ADAPTERS or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        factory = getattr(module, "adapter", None)
        if factory is None:
            raise ConfigError(f"xamt.libraries.{info.name} defines no adapter() function")
        adapter = factory()
        if not isinstance(adapter, LibraryAdapter):
            raise ConfigError(f"xamt.libraries.{info.name}.adapter() returned {type(adapter)!r}")
        found.append(adapter)
    return found


def parse_library_list(text: str | None, registry: Registry) -> list[str]:
    """Parse ``--libs numpy,torch`` into validated adapter names (all of them when empty)."""
    if text is None or not text.strip():
        return registry.names()
    names = []
    for raw in text.split(","):
        name = raw.strip().lower()
        if not name:
            continue
        registry.get(name)  # raises UnknownLibraryError with the list of known names
        if name not in names:
            names.append(name)
    if not names:
        raise ConfigError("--libs names no library")
    return names
