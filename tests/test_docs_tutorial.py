"""docs/tutorial.md runs as written: every fenced block with a `title="FILE"` is written to FILE,
then every ```bash block runs in order in an empty folder (offline, simulated workers)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="([^"]+)"')
BLOCK_SECONDS = 600


def blocks(markdown: str) -> tuple[dict[str, str], list[str]]:
    """(files by title, bash commands in order) of a page's fenced blocks."""
    files, commands = {}, []
    for info, body in FENCE.findall(markdown):
        title = TITLE.search(info)
        if title:
            files[title.group(1)] = body
        elif info.split()[:1] == ["bash"]:
            commands.append(body)
    return files, commands


def test_blocks_finds_titled_files_and_bash_commands_only():
    page = '```yaml title="a.yaml"\nx: 1\n```\n```bash\necho hi\n```\n```text\nnot run\n```\n```python\nprint(1)\n```\n'
    assert blocks(page) == ({"a.yaml": "x: 1\n"}, ["echo hi\n"])


@pytest.mark.slow
def test_the_tutorial_runs_and_its_report_shows_every_method(tmp_path):
    files, commands = blocks(TUTORIAL.read_text())
    assert set(files) == {"my_pool.yaml", "unit_task.py", "my_solver.py"}
    assert len(commands) >= 5
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=BLOCK_SECONDS)  # fmt: skip
        assert done.returncode == 0, f"tutorial block failed:\n{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    table = (tmp_path / "report" / "tables.md").read_text()
    section = table[table.index("Benchmarks the paper does not report") :]
    assert "SIMULATION" in section.splitlines()[0]
    rows = {line.split(" | ")[0].lstrip("| ") for line in section.splitlines() if line.startswith("| ")}
    assert {"cheap_then_check", "conductor [conductor fixed-workflows]", "single_worker (sim/mediocre)"} <= rows
    assert "(n=8x2)" in section and "±" in section
    assert (tmp_path / "report" / "index.html").is_file()
    assert list((tmp_path / "logs-provider").glob("*.eval"))  # the conductor/<pool> model ran too
