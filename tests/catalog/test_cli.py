import json

import pytest

from xamt.cli import COMMAND_PROVIDERS, build_parser, main


def test_subcommands_come_from_providers():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"catalog", "match"} <= set(sub.choices)
    assert len(COMMAND_PROVIDERS) >= 2


def test_catalog_command_json(tmp_path, capsys):
    pytest.importorskip("numpy")
    assert main(["catalog", "--libs", "numpy", "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["libraries"]["numpy"]["counts"]["total"] > 400
    assert (tmp_path / "xamt.db").exists()


def test_unknown_library_exit_status(tmp_path, capsys):
    assert main(["catalog", "--libs", "numpy,nosuchlib", "--out", str(tmp_path)]) == 2
    assert "unknown library 'nosuchlib'" in capsys.readouterr().err


def test_corrupt_store_exit_status(tmp_path, capsys):
    (tmp_path / "xamt.db").write_bytes(b"garbage" * 500)
    assert main(["catalog", "--libs", "numpy", "--out", str(tmp_path)]) == 2
    assert "not a readable Xamt store" in capsys.readouterr().err
