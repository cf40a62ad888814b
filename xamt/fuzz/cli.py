"""The ``fuzz`` and ``repro`` subcommands."""
from __future__ import annotations

import argparse
from pathlib import Path

from xamt.errors import XamtError

__all__ = ["fuzz_command", "repro_command"]


def _configure_fuzz(p: argparse.ArgumentParser) -> None:
    from xamt.exec.cluster import add_ray_option

    p.add_argument("--libs", default=None, metavar="LIST",
                   help="comma-separated libraries (default: every installed one)")
    p.add_argument("--budget", default="10m", help="time budget: seconds or 90s / 10m / 1h (default 10m)")
    p.add_argument("--workers", type=int, default=2, help="sandbox workers (default 2)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the search (default 0)")
    p.add_argument("--resume", action="store_true",
                   help="continue the latest unfinished campaign in --out (budget and seed from it)")
    p.add_argument("--unguided", action="store_true",
                   help="pure random search: no dispersion guidance (the ablation baseline)")
    p.add_argument("--relations", default=None, metavar="LIST",
                   help="relation kinds to fuzz, e.g. cross_library,function_method (default: all)")
    p.add_argument("--window", "--batch", dest="window", type=int, default=None,
                   help="group-iterations in flight at once (default: 32 per worker, fuzzing.toml); "
                        "--batch is its old name")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds per member call before it counts as a hang (default 10; compiled calls get "
                        "validation.toml's compiled_timeout, first calls expected to compile five times "
                        "what the registry build timed)")
    p.add_argument("--memory-budget", type=float, default=None, metavar="GIB",
                   help="GiB the campaign's processes (driver, zygotes, workers) should stay within: a "
                        "worker whose memory outgrows its share is replaced after its task (default: "
                        "fuzzing.toml's memory_share of this machine's memory)")
    p.add_argument("--max-groups", type=int, default=None, help="fuzz a random subset of this many groups")
    p.add_argument("--no-triage", action="store_true", help="find divergences but do not triage them")
    p.add_argument("--devices", default="auto", metavar="auto|cpu|LIST",
                   help="devices the members also run on, compared with the CPU: auto (every device "
                        "the libraries report; CPU only without a GPU), cpu (no device oracle) or a "
                        "list such as cpu,cuda:0 (default auto)")
    p.add_argument("--no-progress", action="store_true", help="no live progress line")
    add_ray_option(p)


def _gib(value: float) -> int:
    if not 0 < value < float("inf"):  # NaN and inf too: int() of them would raise past the message
        raise XamtError(f"--memory-budget must be a positive number of GiB, got {value}")
    return int(value * (1 << 30))


def _run_fuzz(args: argparse.Namespace) -> int:
    from xamt.fuzz.campaign import FuzzConfig, parse_budget, run_campaign
    from xamt.fuzz.devices import parse_devices
    from xamt.libraries.registry import Registry, parse_library_list

    libs = parse_library_list(args.libs, Registry()) if args.libs else None
    relations = [r.strip() for r in args.relations.split(",") if r.strip()] if args.relations else None
    if args.window is not None and args.window < 1:
        raise XamtError("--window must be at least 1")
    cfg = FuzzConfig(out=Path(args.out), libraries=libs, budget_s=parse_budget(args.budget),
                     workers=args.workers, seed=args.seed, resume=args.resume,
                     guided=not args.unguided, relations=relations, window=args.window,
                     timeout=args.timeout, max_groups=args.max_groups, triage=not args.no_triage,
                     progress=not args.no_progress, devices=parse_devices(args.devices), ray=args.ray,
                     memory_budget=None if args.memory_budget is None else _gib(args.memory_budget))
    res = run_campaign(cfg)
    print(f"campaign {res.campaign_id}: {res.groups} groups, {res.iterations} group-iterations "
          f"({res.iterations_per_s:.1f}/s), {res.executions} executions in {res.seconds:.0f}s")
    print(f"groups visited: {res.groups_visited}; seconds compiling (the libraries' clocks): "
          f"{res.compile_s:.0f}; in the slow lane (first calls): {res.slow_lane_s:.0f}")
    print(f"distinct divergences seen: {res.candidates}, triaged: {res.triaged} ({res.triage_s:.0f}s of "
          f"triage beside fuzzing), left untriaged: {res.not_triaged}; findings filed: {res.findings}"
          + (f" ({', '.join(f'{k} {v}' for k, v in sorted(res.by_class.items()))})" if res.by_class else ""))
    if res.ray:
        print(res.ray)
    print(res.devices + (f"; {res.device_findings} finding(s) on a device" if res.device_findings else ""))
    for why, n in sorted(res.dropped.items(), key=lambda kv: -kv[1]):
        print(f"  dropped {n}: {why}")
    print(f"store: {Path(args.out) / 'xamt.db'}; list them with `xamt findings --out {args.out}`")
    return 0


def fuzz_command():
    """The ``fuzz`` subcommand for :mod:`xamt.cli`."""
    from xamt.cli import Command

    return Command("fuzz", "run a differential fuzzing campaign on the validated groups",
                   _configure_fuzz, _run_fuzz)


def _configure_repro(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", type=int, help="finding id (see `xamt findings`)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds the replay may take")


def _run_repro(args: argparse.Namespace) -> int:
    from xamt import repro
    from xamt.findings import FindingsStore
    from xamt.store import Store, default_db_path

    db = default_db_path(args.out)
    if not db.exists():
        raise XamtError(f"no store at {db}")
    with Store(db, create=False) as store:
        f = FindingsStore(store).finding(args.id)
    if f is None:
        raise XamtError(f"no finding with id {args.id} in {db}")
    if not f.reproducer:
        raise XamtError(f"finding {args.id} has no reproducer")
    script = Path(args.out) / f.reproducer
    if not script.exists():
        raise XamtError(f"reproducer {script} is missing (was the output folder moved?)")
    expect = {"crash": "crash", "status": "status", "internal": "internal"}.get(f.finding_class.value, "value")
    sig = None
    if expect == "crash":
        sig = 0 if f.summary.get("status") == "timeout" else None
    v = repro.verify(script, expect=expect, timeout=args.timeout, crash_signal=sig)
    print(v.output_tail)
    if v.returncode == repro.CANNOT_RUN:
        # e.g. a finding on cuda:0 replayed on a machine without that device: no verdict either way
        print(f"finding {args.id} ({f.finding_class.value}, {f.outlier_api}): cannot run here "
              f"(see the reason above)")
        return repro.CANNOT_RUN
    verdict = "reproduced" if v.reproduced else "did NOT reproduce"
    print(f"finding {args.id} ({f.finding_class.value}, {f.outlier_api}): {verdict} "
          f"in {v.seconds:.1f}s (exit status {v.returncode}{', timed out' if v.timed_out else ''})")
    return 0 if v.reproduced else 1


def repro_command():
    """The ``repro`` subcommand for :mod:`xamt.cli`."""
    from xamt.cli import Command

    return Command("repro", "replay a finding's reproducer in a fresh process",
                   _configure_repro, _run_repro)
