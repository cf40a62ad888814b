"""``xamt report`` and ``xamt findings`` through the command line's main()."""
import argparse
import functools
import json

import pytest

import xamt.cli
from xamt.report import add_commands

OURS = ("xamt.report.cli:report_command", "xamt.report.cli:findings_command")


@pytest.fixture
def main(monkeypatch):
    # only this package's commands: the others' providers are not needed (nor imported) here
    monkeypatch.setattr(xamt.cli, "build_parser", functools.partial(xamt.cli.build_parser, OURS))
    return xamt.cli.main


def test_report_prints_the_index_path(main, campaign_out, capsys):
    out, _ = campaign_out
    assert main(["report", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == str(out / "report" / "index.html")
    dest = out.parent / "elsewhere"
    assert main(["report", "--out", str(out), "--dest", str(dest), "--campaign", "1"]) == 0
    assert (dest / "index.html").is_file()


def test_findings_list_json_and_table(main, campaign_out, capsys):
    out, ids = campaign_out
    assert main(["findings", "--out", str(out), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert sorted(r["id"] for r in records) == sorted(ids.values())
    assert main(["findings", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert "torch.maximum" in table and "tensorflow.math.reduce_sum" in table


def test_findings_export_both_formats_and_out_after_the_id(main, campaign_out, capsys):
    out, ids = campaign_out
    assert main(["findings", "export", str(ids["value"]), "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("# `tensorflow.math.reduce_sum`")
    assert main(["findings", "--out", str(out), "export", str(ids["nan"]), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["id"] == ids["nan"] and doc["members"][1]["value"]["values"][3][4] == 0.0


@pytest.mark.parametrize("argv, message", [
    (["report"], "no Xamt store at"),
    (["findings"], "no Xamt store at"),
    (["findings", "export", "1"], "no Xamt store at"),
])
def test_empty_output_folder_is_one_clear_line(main, tmp_path, capsys, argv, message):
    assert main(argv + ["--out", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_unknown_id_and_incompatible_store(main, campaign_out, capsys):
    out, _ = campaign_out
    assert main(["findings", "export", "77", "--out", str(out)]) == 2
    assert "no finding with id 77" in capsys.readouterr().err
    from xamt.store import Store, default_db_path

    with Store(default_db_path(out)) as st:
        st.execute("UPDATE schema_versions SET version=9 WHERE component='findings'")
    assert main(["report", "--out", str(out)]) == 2
    assert "another Xamt" in capsys.readouterr().err


def test_bad_finding_id_is_an_argument_error(main, campaign_out, capsys):
    out, _ = campaign_out
    with pytest.raises(SystemExit) as exc:
        main(["findings", "export", "abc", "--out", str(out)])
    assert exc.value.code == 2 and "not a finding id" in capsys.readouterr().err


def test_add_commands_registers_both(campaign_out, capsys):
    out, _ = campaign_out
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["findings", "--json", "--out", str(out)])
    assert args._run(args) == 0 and json.loads(capsys.readouterr().out)
    args = parser.parse_args(["report"])
    assert args.out == xamt.cli.DEFAULT_OUT
