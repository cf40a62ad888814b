"""A small synthetic campaign in a store, written the way the fuzzer writes one."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sandbox import codec
from xamt.findings import Campaign, Finding, FindingClass, FindingsStore, histogram_of
from xamt.store import Store, default_db_path

VERSIONS = {"numpy": "2.4.6", "torch": "2.13.0", "tensorflow": "2.21.0", "jax": "0.10.2"}

SUM = [{"library": "numpy", "api": "numpy.sum", "status": "ok"},
       {"library": "torch", "api": "torch.sum", "status": "ok"},
       {"library": "tensorflow", "api": "tensorflow.math.reduce_sum", "status": "ok"},
       {"library": "jax", "api": "jax.numpy.sum", "status": "ok"}]
MAX = [{"library": "numpy", "api": "numpy.maximum", "status": "ok"},
       {"library": "torch", "api": "torch.maximum", "status": "ok"},
       {"library": "jax", "api": "jax.numpy.maximum", "status": "ok"}]
GELU = [{"library": "torch", "api": "torch.nn.functional.gelu", "status": "ok"},
        {"library": "tensorflow", "api": "tensorflow.nn.gelu", "status": "ok"},
        {"library": "jax", "api": "jax.nn.gelu", "status": "crash"}]

REPRO = '''"""Reproducer of Xamt finding 1: tensorflow.math.reduce_sum."""
import numpy as np
import tensorflow as tf

x = np.array([[1.0, 2.0, 3.0], [1e-45, 5.0, 6.0]], dtype=np.float32)
print("numpy:", np.sum(x, axis=1))
print("tensorflow:", tf.math.reduce_sum(x, axis=1).numpy())
'''


def ok(value):
    return {"status": "ok", "value": value, "error_type": None, "error_message": None}


def write_small_campaign(out: Path) -> dict[str, int]:
    """Write a campaign with four findings to ``out/xamt.db``; returns finding ids by name."""
    ids = {}
    with Store(default_db_path(out)) as st:
        fs = FindingsStore(st)
        c = Campaign(libraries=dict(VERSIONS), budget_s=60, seed=7, workers=2,
                     started=1_700_000_000.0)
        cid = fs.start_campaign(c)
        for i in range(13):
            fs.add_sample(cid, executions=i * 900, iterations=i * 300, findings=min(4, i // 3),
                          t=c.started + 5.0 * i)
        fs.put_group_stats(cid, "sum/reduction", 1200, 4800, 1.0,
                           histogram_of([0.0] * 3000 + [1e-7] * 1700 + [1.0] * 100), members=SUM)
        fs.put_group_stats(cid, "maximum/elementwise", 900, 2700, float("inf"),
                           histogram_of([0.0] * 2600 + [1e12] * 100), members=MAX)
        fs.put_group_stats(cid, "gelu/activation", 300, 900, 0.5,
                           histogram_of([1e-3] * 800 + [0.5] * 100), members=GELU)

        # 1: a value finding with a verified reproducer; tensorflow flushes the subnormal
        x = np.array([[1.0, 2.0, 3.0], [1e-45, 5.0, 6.0]], dtype=np.float32)
        good = np.array([6.0, 11.0], dtype=np.float32)
        bad = np.array([6.0, 12.5], dtype=np.float32)
        repro = out / "findings" / "1" / "repro.py"
        repro.parent.mkdir(parents=True, exist_ok=True)
        repro.write_text(REPRO, encoding="utf-8")
        f = Finding(cid, "sum/reduction", "cross_library", FindingClass.VALUE, "tensorflow",
                    "tensorflow.math.reduce_sum", "float32", "float32[2,3]|axis=1", SUM,
                    summary={"max_abs_diff": 1.5, "max_rel_diff": 0.136, "mismatched": 1,
                             "total": 2, "first_mismatch": [1]},
                    input_recipe={"x": {"shape": [2, 3], "dtype": "float32", "seed": 11}},
                    reproducer="findings/1/repro.py", verified=True, first_seen=c.started + 12)
        ids["value"], _ = fs.file(f, codec.dumps({"x": x, "axis": 1}),
                                  codec.dumps([ok(good), ok(good.copy()), ok(bad), ok(good)]))

        # 2: NaN handling, a 2-d output bigger than a page's table
        a = np.linspace(-1, 1, 20 * 15).reshape(20, 15)
        a[3, 4] = np.nan
        expect = np.maximum(a, 0.0)
        torch_out = expect.copy()
        torch_out[3, 4] = 0.0
        torch_out[19, 14] = -7.0
        f = Finding(cid, "maximum/elementwise", "cross_library", FindingClass.NAN, "torch",
                    "torch.maximum", "float64", "float64[20,15]|nan", MAX,
                    summary={"nan_mismatch": 1, "mismatched": 2, "total": 300,
                             "also": [{"api": "torch.fmax", "signature": "+inf"},
                                      {"api": "torch.maximum", "signature": "RuntimeError: x", "class": "status"}]},
                    first_seen=c.started + 30, hits=3)
        ids["nan"], _ = fs.file(f, codec.dumps({"x1": a, "x2": np.float64(0.0)}),
                                codec.dumps([ok(expect), ok(torch_out), ok(expect.copy())]))

        # 3: a crash of one member, no reproducer yet
        g = np.array([-3.0, 0.0, 3.0], dtype=np.float32)
        gelu = np.array([-0.00404969, 0.0, 2.9959502], dtype=np.float32)
        f = Finding(cid, "gelu/activation", "cross_library", FindingClass.CRASH, "jax",
                    "jax.nn.gelu", "float32", "float32[3]", GELU,
                    summary={"signal": "SIGSEGV"}, first_seen=c.started + 41)
        ids["crash"], _ = fs.file(f, codec.dumps({"x": g}), codec.dumps(
            [ok(gelu), ok(gelu.copy()),
             {"status": "crash", "value": None, "error_type": "signal",
              "error_message": "worker died with SIGSEGV"}]))

        # 4: a status finding in bfloat16 (an ml_dtypes array in the evidence)
        import ml_dtypes

        b = np.array([1.5, -2.0, 0.25], dtype=ml_dtypes.bfloat16)
        f = Finding(cid, "sum/reduction", "cross_library", FindingClass.STATUS, "numpy",
                    "numpy.sum", "bfloat16", "bfloat16[3]", SUM, first_seen=c.started + 50)
        total = np.array(-0.25, dtype=ml_dtypes.bfloat16)
        ids["status"], _ = fs.file(f, codec.dumps({"x": b}), codec.dumps(
            [{"status": "error", "value": None, "error_type": "TypeError",
              "error_message": "ufunc 'add' did not contain a loop with signature matching types"},
             ok(total), ok(total.copy()), ok(total.copy())]))

        c.executions, c.iterations, c.groups = 10_800, 3_600, 3
        c.status, c.finished = "done", c.started + 60.0
        c.settings = {"python": "3.11.9", "platform": "Linux x86_64"}
        fs.update_campaign(c)
    return ids


def write_catalog(out: Path, counts: dict[str, int]) -> None:
    """Catalog tables as `xamt catalog` leaves them (only what the report reads)."""
    from xamt.catalog import CATALOG_SCHEMA

    with Store(default_db_path(out)) as st:
        st.ensure(CATALOG_SCHEMA)
        for lib, n in counts.items():
            st.execute("INSERT INTO catalog_libraries VALUES (?, ?, ?, ?, ?, ?)",
                       (lib, VERSIONS[lib], "fp", 0.0, 1.0, json.dumps({})))
            st.executemany("INSERT INTO catalog_apis VALUES (?, ?, ?, ?)",
                           [(lib, f"{lib}.api{i}", "function", "{}") for i in range(n)])


@pytest.fixture
def campaign_out(tmp_path):
    """An output folder holding a small campaign; yields ``(out, ids)``."""
    out = tmp_path / "xamt-out"
    ids = write_small_campaign(out)
    return out, ids
