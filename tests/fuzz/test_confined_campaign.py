"""A short campaign writes nothing outside its --out folder (issue #15, item 4).

The campaign runs with a home folder and a system temporary folder of its own (``HOME`` and
``TMPDIR`` point into this test's folder; the machine's own are shared with other programs, so
changes there would prove nothing about this run): both are snapshotted before and after, and
the temporary folder must be left empty (the pool removes its worker folders). The workers run
confined (the pool's default), which the pool's description says.
"""
from __future__ import annotations

import os
import tempfile

import sandbox
from sandbox import SandboxPool, confine
from xamt.fuzz.campaign import FuzzConfig, run_campaign

from .test_campaign import make_store


def snapshot(folder):
    """Relative path -> (kind, size, mtime) of everything under ``folder``."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            info = os.lstat(path)
            found[os.path.relpath(path, folder)] = (info.st_mode >> 12, info.st_size if name in files else 0,
                                                    info.st_mtime_ns if name in files else 0)
    return found


def test_a_short_campaign_leaves_no_file_outside_its_out_folder(tmp_path, monkeypatch):
    home, system_tmp, out = tmp_path / "home", tmp_path / "tmp", tmp_path / "out"
    home.mkdir()
    (home / ".profile").write_text("# a home folder\n")
    system_tmp.mkdir()
    make_store(out)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(system_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    described = []

    class DescribedPool(SandboxPool):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            described.append(self.describe())

    monkeypatch.setattr(sandbox, "SandboxPool", DescribedPool)  # run_campaign imports it from there
    before_home, before_top = snapshot(home), sorted(os.listdir(tmp_path))

    result = run_campaign(FuzzConfig(out=out, libraries=["numpy"], budget_s=6, workers=2, window=8, timeout=5,
                                     progress=False, triage=False))

    assert result.iterations > 20
    assert described, "the campaign made no pool"
    if confine.landlock_abi()[0] >= 1:
        assert "confined (Landlock ABI" in described[0], described
    assert snapshot(home) == before_home, "the campaign changed the home folder"
    assert os.listdir(system_tmp) == [], f"left in the temporary folder: {os.listdir(system_tmp)}"
    assert sorted(os.listdir(tmp_path)) == before_top
