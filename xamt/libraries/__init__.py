"""Library adapters: one module per library (see :mod:`xamt.libraries.base`).

Importing this package imports no library; :class:`~xamt.libraries.registry.Registry` discovers
the adapter modules.
"""
from xamt.libraries.base import ClassNamespace, LibraryAdapter, MethodOwner, resolve_ref
from xamt.libraries.registry import Registry, parse_library_list

__all__ = [
    "ClassNamespace", "LibraryAdapter", "MethodOwner", "Registry", "parse_library_list",
    "resolve_ref",
]
