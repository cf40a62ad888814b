"""The API catalog: every public callable of each library, with signature, docs and aliases.

Mining (:func:`mine_library`) imports one library and walks its adapter's namespaces, tensor
classes and callable-class namespaces. It runs in a child process per library
(``python -m xamt.catalog --worker LIB --result FILE``) so heavy imports stay out of the caller and
libraries are isolated from one another; :func:`build_catalog` runs those workers (two at a time
by default), caches each library's records in the store keyed by the library's version and the
miner's fingerprint, and loads them from there on the next run.

The modules, bottom up:

* :mod:`~xamt.catalog.records`: the data model (:class:`Param`, :class:`ApiRecord`, ...);
* :mod:`~xamt.catalog.docs`: what docstrings say about other APIs (references, equivalences);
* :mod:`~xamt.catalog.signatures`: signatures from inspection, docstrings or an adapter's hook;
* :mod:`~xamt.catalog.ownership`: which objects of a namespace are the mined library's APIs;
* :mod:`~xamt.catalog.callstyles`: records reshaped for their namespace's call style;
* :mod:`~xamt.catalog.mining`: :func:`mine_library` (what is mined, per object);
* :mod:`~xamt.catalog.cache`: the store's tables, the miner's fingerprint, save and load;
* :mod:`~xamt.catalog.worker`: mining in a child interpreter (``__main__`` runs its child side);
* :mod:`~xamt.catalog.build`: :func:`build_catalog`, the cache or a worker per library;
* :mod:`~xamt.catalog.cli`: the ``xamt catalog`` subcommand.

This package re-exports the names its users import, so ``from xamt.catalog import X`` does not
depend on which module holds ``X``.
"""
from __future__ import annotations

from xamt.catalog.build import build_catalog
from xamt.catalog.cache import CATALOG_SCHEMA, MINER_VERSION, load_catalog, miner_fingerprint
from xamt.catalog.docs import DocPatterns, doc_body, doc_references
from xamt.catalog.mining import mine_library
from xamt.catalog.records import ApiRecord, CatalogResult, LibraryCatalog, Param
from xamt.catalog.signatures import doc_signatures, extract_signature, parse_signature_text

__all__ = [
    "Param", "ApiRecord", "LibraryCatalog", "CatalogResult", "MINER_VERSION", "CATALOG_SCHEMA",
    "mine_library", "build_catalog", "load_catalog", "parse_signature_text", "miner_fingerprint",
    "doc_body", "doc_signatures", "doc_references", "extract_signature", "DocPatterns",
]
