"""Loading and validating the matching data files under ``xamt/data/``.

:func:`load_matching_data` reads ``aliases.toml``, ``categories.toml``, ``roles.toml``,
``homonyms.toml``, ``argument_plans.toml``, ``matching.toml`` and ``distributions.toml`` into
one immutable
:class:`MatchingData`. A missing file, bad TOML or a wrong-typed entry raises
:class:`~xamt.errors.DataFileError` naming the file and the entry; nothing fails silently.
A different folder can be given (tests, a user's own data).
"""
from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from xamt.errors import DataFileError

__all__ = ["MatchingData", "Homonym", "PlanOverride", "load_matching_data", "data_dir"]

_FILES = ("aliases.toml", "categories.toml", "roles.toml", "homonyms.toml",
          "argument_plans.toml", "matching.toml", "distributions.toml")


def data_dir() -> Path:
    """The packaged ``xamt/data`` folder."""
    return Path(str(resources.files("xamt") / "data"))


@dataclass(frozen=True)
class Homonym:
    api: str
    canonical: str | None
    reason: str

    def matches(self, qualname: str) -> bool:
        if self.api.endswith("*"):
            return qualname.startswith(self.api[:-1])
        return qualname == self.api


@dataclass(frozen=True)
class PlanOverride:
    apis: tuple[str, ...]
    map: dict[str, str]
    defaults: dict[str, Any]
    fixed: dict[str, Any]
    fixed_dtype: dict[str, str]
    drop: tuple[str, ...]
    reason: str
    #: member parameter -> role: passed that role's fixed value (roles.toml [fixed]) converted
    #: by the role's transform (TF's stateless samplers take their seed as a PRNG key)
    fixed_as: dict[str, str] = field(default_factory=dict)
    #: canonical names of the cross-library groups the entry is scoped to (empty: every plan of
    #: the API): an API that is a member of several groups (``torch.dist`` is the Minkowski
    #: distance and, with ``p`` fixed to 1, the city-block one) takes the fixed argument only in
    #: the group that needs it
    canonicals: tuple[str, ...] = ()

    def matches(self, qualname: str, canonical: str | None = None) -> bool:
        """Whether the entry applies to ``qualname`` planned in a group named ``canonical``
        (None: outside any cross-library group, where only unscoped entries apply)."""
        if self.canonicals and canonical not in self.canonicals:
            return False
        return any(qualname.startswith(a[:-1]) if a.endswith("*") else qualname == a
                   for a in self.apis)


@dataclass(frozen=True)
class MatchingData:
    """Everything the matcher reads from data files (see each file's header comment)."""

    aliases: dict[str, str]
    library_aliases: dict[str, dict[str, str]]
    #: namespace -> {an API's own name in that namespace: canonical name}, looked up first
    namespace_aliases: dict[str, dict[str, str]]
    lossy: frozenset[str]
    also: dict[str, tuple[str, ...]]
    max_hops: int
    strip_prefixes: tuple[str, ...]
    keep_prefixes: tuple[str, ...]
    strip_suffixes: tuple[str, ...]
    hard_categories: frozenset[str]
    soft_categories: frozenset[str]
    excluded_categories: frozenset[str]
    status_only_categories: frozenset[str]
    category_namespaces_first: tuple[tuple[frozenset[str], str], ...]
    #: (own names, namespace tokens, category): categories.toml [[member]], tried first
    category_members: tuple[tuple[frozenset[str], frozenset[str], str], ...]
    category_overrides: tuple[tuple[re.Pattern[str], str], ...]
    category_namespaces: tuple[tuple[frozenset[str], str], ...]
    category_terms: tuple[tuple[str, frozenset[str]], ...]
    control_names: frozenset[str]
    role_names: dict[str, str]
    role_prefixes: tuple[tuple[str, str], ...]
    #: category -> {name: role}: roles.toml [category_names], looked up before [names]
    role_category_names: dict[str, dict[str, str]]
    role_suffixes: tuple[tuple[str, str], ...]
    role_transforms: dict[str, str]
    #: role -> the other roles it may pair with in an argument plan (``[compatible]``)
    role_compatible: dict[str, frozenset[str]]
    #: role -> value given to a required parameter of that role no slot feeds (roles.toml [fixed])
    role_fixed: dict[str, Any]
    type_transforms: dict[str, dict[str, str]]
    type_words: tuple[tuple[str, tuple[str, ...]], ...]
    homonyms: tuple[Homonym, ...]
    overrides: tuple[PlanOverride, ...]
    confidence: dict[str, float]
    grouping: dict[str, float]
    assignment: dict[str, Any]
    stopwords: frozenset[str]
    min_token: int
    relations: dict[str, Any]
    #: constructed API (``torch.distributions.Normal.log_prob``) -> its canonical name
    #: (``norm_logpdf``), from distributions.toml; a constructed API without one matches nothing
    constructed_names: dict[str, str] = field(default_factory=dict)
    fingerprint: str = field(default="")
    #: category -> canonical names in it that compute a fixed value (an initializer's zeros):
    #: value-compared although the category is status-only (categories.toml [deterministic])
    deterministic_names: dict[str, frozenset[str]] = field(default_factory=dict)
    #: settings of the inferred relations (matching.toml ``[inferred]``, see
    #: :mod:`xamt.matching.inferred`)
    inferred: dict[str, float] = field(default_factory=dict)

    def homonym_for(self, qualname: str, canonical: str) -> Homonym | None:
        for h in self.homonyms:
            if h.matches(qualname) and (h.canonical is None or h.canonical == canonical):
                return h
        return None

    def overrides_for(self, qualname: str, canonical: str | None = None) -> list[PlanOverride]:
        """The plan overrides of ``qualname`` in a group of canonical name ``canonical``
        (unscoped entries always; entries scoped by ``canonicals`` only in their groups)."""
        return [o for o in self.overrides if o.matches(qualname, canonical)]


def _read(folder: Path, name: str) -> dict[str, Any]:
    path = folder / name
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise DataFileError(f"matching data file {path} is missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{path}: not valid TOML: {exc}") from exc


def _expect(cond: bool, file: str, what: str) -> None:
    if not cond:
        raise DataFileError(f"{file}: {what}")


def _str_map(value: Any, file: str, what: str) -> dict[str, str]:
    _expect(isinstance(value, dict), file, f"{what} must be a table")
    for k, v in value.items():
        _expect(isinstance(v, str), file, f"{what}.{k} must be a string, got {v!r}")
    return dict(value)


def _table(value: Any, file: str, what: str) -> dict[str, Any]:
    _expect(isinstance(value, dict), file, f"{what} must be a table")
    return dict(value)


def _str_list(value: Any, file: str, what: str) -> list[str]:
    _expect(isinstance(value, list) and all(isinstance(v, str) for v in value), file,
            f"{what} must be a list of strings")
    return list(value)


def load_matching_data(folder: str | Path | None = None) -> MatchingData:
    """Read and validate the matching data files from ``folder`` (default: the packaged ones)."""
    base = Path(folder) if folder is not None else data_dir()
    raw = {name: _read(base, name) for name in _FILES}
    digest = hashlib.sha256()
    for name in _FILES:
        digest.update((base / name).read_bytes())

    al = raw["aliases.toml"]
    canon = al.get("canonicalise", {})
    aliases = _str_map(al.get("aliases", {}), "aliases.toml", "[aliases]")
    lib_aliases = {
        lib: _str_map(table, "aliases.toml", f"[library_aliases.{lib}]")
        for lib, table in al.get("library_aliases", {}).items()
    }
    ns_aliases = {
        ns: _str_map(table, "aliases.toml", f"[namespace_aliases.{ns}]")
        for ns, table in al.get("namespace_aliases", {}).items()
    }
    also = {}
    for api, names in al.get("also", {}).items():
        also[api] = tuple(_str_list(names, "aliases.toml", f"[also].{api}"))
    lossy = _str_list(al.get("lossy", {}).get("sources", []), "aliases.toml", "[lossy].sources")

    cat = raw["categories.toml"]
    overrides = []
    for i, entry in enumerate(cat.get("override", [])):
        _expect(isinstance(entry, dict) and "pattern" in entry and "category" in entry,
                "categories.toml", f"[[override]] #{i} needs pattern and category")
        try:
            overrides.append((re.compile(entry["pattern"]), entry["category"]))
        except re.error as exc:
            raise DataFileError(f"categories.toml: [[override]] #{i}: bad regex: {exc}") from exc
    namespaces = []
    for i, entry in enumerate(cat.get("namespace", [])):
        tokens = _str_list(entry.get("tokens"), "categories.toml", f"[[namespace]] #{i}.tokens")
        namespaces.append((frozenset(tokens), str(entry.get("category"))))
    namespaces_first = []
    for i, entry in enumerate(cat.get("namespace_first", [])):
        tokens = _str_list(entry.get("tokens"), "categories.toml",
                           f"[[namespace_first]] #{i}.tokens")
        namespaces_first.append((frozenset(tokens), str(entry.get("category"))))
    category_members = []
    for i, entry in enumerate(cat.get("member", [])):
        names = _str_list(entry.get("names"), "categories.toml", f"[[member]] #{i}.names")
        tokens = _str_list(entry.get("tokens", []), "categories.toml", f"[[member]] #{i}.tokens")
        category_members.append((frozenset(names), frozenset(tokens), str(entry.get("category"))))
    terms = tuple(
        (name, frozenset(_str_list(words, "categories.toml", f"[terms].{name}")))
        for name, words in cat.get("terms", {}).items()
    )
    hard = frozenset(_str_list(cat.get("hard", []), "categories.toml", "hard"))
    soft = frozenset(_str_list(cat.get("soft", []), "categories.toml", "soft"))
    excluded = frozenset(_str_list(cat.get("excluded", []), "categories.toml", "excluded"))
    named = [*(c for _, c in [*overrides, *namespaces, *namespaces_first]),
             *(c for _, _, c in category_members), *(c for c, _ in terms)]
    for c in named:
        _expect(c in hard or c in soft, "categories.toml", f"category {c!r} is neither hard nor soft")

    ro = raw["roles.toml"]
    role_names: dict[str, str] = {}
    for role, names in ro.get("names", {}).items():
        for n in _str_list(names, "roles.toml", f"[names].{role}"):
            _expect(n not in role_names, "roles.toml", f"name {n!r} has two roles")
            role_names[n] = role
    category_names: dict[str, dict[str, str]] = {}
    for category, table in ro.get("category_names", {}).items():
        for role, names in table.items():
            for n in _str_list(names, "roles.toml", f"[category_names.{category}].{role}"):
                category_names.setdefault(category, {})[n] = role
    prefixes = tuple((p, role) for role, ps in ro.get("prefixes", {}).items()
                     for p in _str_list(ps, "roles.toml", f"[prefixes].{role}"))
    suffixes = tuple((s, role) for role, ss in ro.get("suffixes", {}).items()
                     for s in _str_list(ss, "roles.toml", f"[suffixes].{role}"))
    compatible: dict[str, set[str]] = {}
    for family, roles in ro.get("compatible", {}).items():
        members = _str_list(roles, "roles.toml", f"[compatible].{family}")
        for r in members:
            compatible.setdefault(r, set()).update(m for m in members if m != r)
    types = tuple((t, tuple(_str_list(ws, "roles.toml", f"[types].{t}")))
                  for t, ws in ro.get("types", {}).items())

    homonyms = []
    for i, entry in enumerate(raw["homonyms.toml"].get("homonym", [])):
        _expect(isinstance(entry.get("api"), str) and isinstance(entry.get("reason"), str),
                "homonyms.toml", f"[[homonym]] #{i} needs api and reason")
        homonyms.append(Homonym(entry["api"], entry.get("canonical"), entry["reason"]))

    plan_overrides = []
    for i, entry in enumerate(raw["argument_plans.toml"].get("override", [])):
        apis = _str_list(entry.get("apis"), "argument_plans.toml", f"[[override]] #{i}.apis")
        plan_overrides.append(PlanOverride(
            apis=tuple(apis),
            map=_str_map(entry.get("map", {}), "argument_plans.toml", f"#{i}.map"),
            defaults=dict(entry.get("defaults", {})),
            fixed=dict(entry.get("fixed", {})),
            fixed_dtype=_str_map(entry.get("fixed_dtype", {}), "argument_plans.toml",
                                 f"#{i}.fixed_dtype"),
            drop=tuple(_str_list(entry.get("drop", []), "argument_plans.toml", f"#{i}.drop")),
            reason=str(entry.get("reason", "")),
            fixed_as=_str_map(entry.get("fixed_as", {}), "argument_plans.toml", f"#{i}.fixed_as"),
            canonicals=tuple(_str_list(entry.get("canonicals", []), "argument_plans.toml",
                                       f"#{i}.canonicals")),
        ))

    names, dist_overrides = _distributions(raw["distributions.toml"])
    plan_overrides.extend(dist_overrides)

    m = raw["matching.toml"]
    for section in ("confidence", "grouping", "assignment", "doc", "relations"):
        _expect(isinstance(m.get(section), dict), "matching.toml", f"[{section}] is missing")
    return MatchingData(
        aliases=aliases, library_aliases=lib_aliases, namespace_aliases=ns_aliases, lossy=frozenset(lossy), also=also,
        max_hops=int(canon.get("max_hops", 4)),
        strip_prefixes=tuple(_str_list(canon.get("strip_prefixes", []), "aliases.toml",
                                       "strip_prefixes")),
        keep_prefixes=tuple(_str_list(canon.get("keep", []), "aliases.toml", "keep")),
        strip_suffixes=tuple(_str_list(canon.get("strip_suffixes", []), "aliases.toml",
                                       "strip_suffixes")),
        hard_categories=hard, soft_categories=soft, excluded_categories=excluded,
        status_only_categories=frozenset(_str_list(cat.get("status_only", []), "categories.toml",
                                                   "status_only")),
        deterministic_names={
            str(c): frozenset(_str_list(names, "categories.toml", f"deterministic.{c}"))
            for c, names in _table(cat.get("deterministic", {}), "categories.toml",
                                   "[deterministic]").items()},
        category_namespaces_first=tuple(namespaces_first), category_members=tuple(category_members),
        category_overrides=tuple(overrides), category_namespaces=tuple(namespaces),
        category_terms=terms,
        control_names=frozenset(_str_list(ro.get("control", []), "roles.toml", "control")),
        role_names=role_names, role_category_names=category_names, role_prefixes=prefixes, role_suffixes=suffixes,
        role_transforms=_str_map(ro.get("transforms", {}), "roles.toml", "[transforms]"),
        role_compatible={r: frozenset(c) for r, c in compatible.items()},
        role_fixed=dict(ro.get("fixed", {})),
        type_transforms={role: _str_map(t, "roles.toml", f"[type_transforms].{role}")
                         for role, t in ro.get("type_transforms", {}).items()},
        type_words=types, homonyms=tuple(homonyms), overrides=tuple(plan_overrides),
        confidence={k: float(v) for k, v in m["confidence"].items()},
        grouping={k: float(v) for k, v in m["grouping"].items()},
        assignment=dict(m["assignment"]),
        stopwords=frozenset(_str_list(m["doc"].get("stopwords", []), "matching.toml",
                                      "[doc].stopwords")),
        min_token=int(m["doc"].get("min_token", 3)),
        relations=dict(m["relations"]),
        inferred=_inferred(m),
        constructed_names=names,
        fingerprint=digest.hexdigest()[:16],
    )


_INFERRED_KEYS = ("top_k", "shortlist", "w_signature", "w_doc", "min_score", "min_signature",
                  "min_doc")


def _inferred(m: dict[str, Any]) -> dict[str, float]:
    table = m.get("inferred")
    _expect(isinstance(table, dict), "matching.toml", "[inferred] is missing")
    out = {}
    for key in _INFERRED_KEYS:
        value = table.get(key)
        _expect(isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0,
                "matching.toml", f"[inferred].{key} must be a number >= 0, got {value!r}")
        out[key] = float(value)
    unknown = sorted(set(table) - set(_INFERRED_KEYS))
    _expect(not unknown, "matching.toml", f"[inferred] has unknown keys {unknown}")
    _expect(out["top_k"] >= 1 and out["shortlist"] >= out["top_k"], "matching.toml",
            "[inferred] needs top_k >= 1 and shortlist >= top_k")
    return out


def _distributions(raw: dict[str, Any]) -> tuple[dict[str, str], list[PlanOverride]]:
    """Canonical names and argument-plan overrides of the distribution classes of
    ``distributions.toml`` (see its header): one override per (class, method), mapping the
    constructor's parameters and the method's variate onto the scipy parameters' slots and
    passing the fixed constructor keywords (a fixed parameter is dropped as a slot)."""
    file = "distributions.toml"
    names: dict[str, str] = {}
    overrides: list[PlanOverride] = []
    for lib, table in raw.items():
        _expect(isinstance(table, dict) and isinstance(table.get("module"), str), file,
                f"[{lib}] needs a module")
        module = table["module"]
        _expect(isinstance(table.get("variate_param"), str), file,
                f"[{lib}] needs variate_param")
        lib_fixed = table.get("fixed", {})
        _expect(isinstance(lib_fixed, dict), file, f"[{lib}].fixed must be a table")
        methods = table.get("methods", {})
        for method, spec in methods.items():
            for key in ("continuous", "discrete"):
                _expect(isinstance(spec.get(key), str), file,
                        f"[{lib}.methods.{method}] needs {key}")
            if "classes" in spec:
                _str_list(spec["classes"], file, f"[{lib}.methods.{method}].classes")
        for cls, entry in table.get("classes", {}).items():
            what = f"[{lib}.classes.{cls}]"
            # method -> canonical name where the counterpart is no scipy distribution's method
            # (a free function: Categorical.entropy is scipy.stats.entropy)
            given = _str_map(entry.get("names", {}), file, f"{what}.names")
            _expect(set(given) <= set(methods), file, f"{what}.names names an unknown method")
            params = _str_map(entry.get("params", {}), file, f"{what}.params")
            fixed = entry.get("fixed", {})
            _expect(isinstance(fixed, dict), file, f"{what}.fixed must be a table")
            _expect(not set(params) & set(fixed), file, f"{what}: a parameter both mapped and fixed")
            skip = set(_str_list(entry.get("skip", []), file, f"{what}.skip"))
            _expect(skip <= set(methods), file, f"{what}.skip names an unknown method")
            # the methods matched for this class (a method may list the only classes it is for)
            own = {m for m, spec in methods.items() if cls in spec.get("classes", [cls])}
            _expect(isinstance(entry.get("scipy"), str) or own <= skip | set(given),
                    file, f"{what} needs scipy (or names for every method it does not skip)")
            variate_params = _str_map(entry.get("variate_params", {}), file,
                                      f"{what}.variate_params")
            discrete = bool(entry.get("discrete", False))
            kind = "discrete" if discrete else "continuous"
            for method, spec in methods.items():
                # a method matched only for the classes it lists (a sampler: only where the
                # group's parameters are the scipy distribution's)
                if method in skip or method not in own:
                    continue
                api = f"{module}.{cls}.{method}"
                names[api] = given.get(method) or f"{entry['scipy']}_{spec[kind]}"
                mapping = dict(params)
                variate = spec.get("discrete_variate" if discrete else "variate")
                if variate is not None and "variate" in entry:
                    # a multivariate distribution names its variate x even for a mass function
                    _expect(isinstance(entry["variate"], str), file, f"{what}.variate must be a string")
                    variate = entry["variate"]
                if variate is not None:
                    param = variate_params.get(method, table["variate_param"])
                    mapping[param] = str(variate)
                overrides.append(PlanOverride(
                    apis=(api,), map=mapping, defaults={},
                    fixed={**lib_fixed, **fixed}, fixed_dtype={}, drop=tuple(fixed),
                    reason=str(entry.get("reason", "")),
                ))
    return names, overrides
