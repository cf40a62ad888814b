"""Replays forked from an import-only interpreter (xamt/replay.py) judge scripts exactly as a
fresh ``python script`` does (xamt.repro.verify)."""
from __future__ import annotations

import textwrap

import pytest

from xamt import repro
from xamt.replay import ReplayServer

SCRIPTS = {
    # name: (source, expect, crash_signal)
    "reproduces": ("import numpy as np\nprint(np.float32(1) / 3)\nprint('REPRODUCED')\nraise SystemExit(1)\n",
                   "value", None),
    "does_not": ("print('not reproduced')\n", "value", None),
    "exit1_without_verdict": ("raise SystemExit(1)\n", "value", None),
    "uncaught": ("raise ValueError('boom')\n", "value", None),
    "segfault": ("import ctypes\nctypes.string_at(0)\n", "crash", None),
    "hang": ("import time\ntime.sleep(60)\n", "crash", 0),
    # a replay is a process that ran nothing before: Xamt is not in it, and the script's own
    # folder comes first on its path, as for `python script`
    "fresh": ("import os, sys\nassert 'xamt' not in sys.modules, sorted(sys.modules)\n"
              "assert sys.path[0] == os.path.dirname(os.path.abspath(__file__)) == os.getcwd()\n"
              "print('REPRODUCED')\nsys.exit(1)\n", "value", None),
}


@pytest.fixture(scope="module")
def server():
    with ReplayServer(["numpy"], memory_limit=512 << 20) as s:
        yield s


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_forked_replay_gives_the_verdict_of_a_fresh_interpreter(tmp_path, server, name):
    source, expect, sig = SCRIPTS[name]
    script = tmp_path / f"{name}.py"
    script.write_text(textwrap.dedent(source))
    forked = server.verify(script, expect=expect, timeout=3, crash_signal=sig)
    fresh = repro.verify(script, expect=expect, timeout=3, crash_signal=sig)
    assert (forked.reproduced, forked.returncode, forked.timed_out) == \
           (fresh.reproduced, fresh.returncode, fresh.timed_out), (forked, fresh)
    assert forked.reproduced == (name in ("reproduces", "segfault", "hang", "fresh"))
    if name == "uncaught":
        assert "ValueError: boom" in forked.output_tail
    assert server.stats["fresh"] == 0


def test_a_replay_cannot_take_the_machines_memory(tmp_path, server):
    script = tmp_path / "bomb.py"
    script.write_text("import numpy as np\na = np.ones(2 << 30, dtype=np.uint8)\nprint('REPRODUCED')\nraise SystemExit(1)\n")
    v = server.verify(script, expect="value", timeout=20)
    assert not v.reproduced and v.returncode == 1 and "MemoryError" in v.output_tail


def test_a_replay_in_a_fresh_interpreter_cannot_take_the_machines_memory_either(tmp_path):
    """The fresh-interpreter path (another venv's interpreter, an environment of its own): the
    limit is the replay's allowance plus what imports may take; asking for more fails."""
    script = tmp_path / "bomb.py"
    ask = repro.IMPORT_ALLOWANCE + (1 << 30)  # reserved only: bytearray's pages stay untouched
    script.write_text(f"try:\n    b = bytearray({ask})\n    print('ALLOCATED')\n"
                      f"except MemoryError:\n    print('REFUSED')\n")
    with ReplayServer([], memory_limit=512 << 20) as server:
        v = server.verify(script, expect="value", timeout=20, env={"XAMT_TEST_FRESH": "1"})
        assert server.stats["fresh"] == 1 and "REFUSED" in v.output_tail, v
    assert "ALLOCATED" in repro.verify(script, expect="value", timeout=20).output_tail  # no limit given


def test_a_dead_server_is_started_again(tmp_path):
    script = tmp_path / "ok.py"
    script.write_text("print('REPRODUCED')\nraise SystemExit(1)\n")
    with ReplayServer([]) as s:
        assert s.verify(script, expect="value", timeout=10).reproduced
        s._proc.kill()
        s._proc.wait()
        assert s.verify(script, expect="value", timeout=10).reproduced
        assert s.stats["starts"] == 2 and s.stats["forked"] == 2
