"""The docs' step-by-step pages run as written, read from the pages themselves: docs/tutorial.md and the
quick starts (the README's and docs/index.md's Set-up). Steps run in page order in a fresh HOME, starting
in a copy of the checkout (where the pages say you start), offline: a block with `title="FILE"` is saved
as FILE in the current folder, a `bash` block runs there (a `cd` in it carries to the next block), a
`text` block is output and not a step. A step a test cannot take says so in the page, on the line above
its block, a blank line between (`<!-- not run by the tests: REASON -->`); such steps are counted and
listed at the end of the pytest run (conftest.py), never skipped silently."""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from waits import run_command

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
QUICK_STARTS = [(ROOT / "README.md", "Set-up"), (ROOT / "docs" / "index.md", "Set-up")]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="([^"]+)"')
NOT_RUN = re.compile(r"<!-- not run by the tests: (.+?) -->")
NOT_CHECKOUT = shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "logs", "runs", "build")  # .gitignore's


@dataclass
class Step:
    """One fenced block of a page: a file to save (`title`) or commands to run, unless `not_run` says why."""

    where: str  # page:line of the block's opening fence
    text: str
    title: str | None = None
    not_run: str | None = None


def page_steps(path: Path, section: str | None = None) -> list[Step]:
    """The steps of a page (or of its `## section`), in order. Fails on a block that is neither a file,
    a `bash` command block, `text` output, nor marked as not run."""
    markdown = path.read_text()
    start, end = 0, len(markdown)
    if section:
        start = markdown.index(f"\n## {section}\n")
        after = markdown.find("\n## ", start + 1)
        end = after if after != -1 else end
    steps = []
    for match in FENCE.finditer(markdown, start, end):
        info, body = match.groups()
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
        where = f"{shown}:{markdown.count(chr(10), 0, match.start()) + 1}"
        above = markdown[: match.start()].rstrip().rsplit("\n", 1)[-1]  # the nearest line with text
        reason = NOT_RUN.fullmatch(above.strip())
        title = TITLE.search(info)
        kind = info.split()[:1]
        if kind == ["text"] and not reason:
            continue
        assert title or kind == ["bash"] or reason, f"{where}: a ```{info} block: title it, make it bash or mark it"
        steps.append(Step(where, body, title and title.group(1), reason and reason.group(1)))
    return steps


def shown_output(path: Path) -> list[str]:
    """The bodies of a page's `text` blocks: the output it says a step prints."""
    return [body for info, body in FENCE.findall(path.read_text()) if info.split()[:1] == ["text"]]


def user_env(home: Path) -> dict[str, str]:
    """A new user's environment: this one's Python and packages, a fresh HOME, no Inspect or XDG settings."""
    fresh = ("INSPECT_", "XDG_", "CONDUCTOR_BENCH_")
    env = {key: value for key, value in os.environ.items() if not key.startswith(fresh)}
    path = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return {**env, "HOME": str(home), "PATH": path, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def run_steps(steps: list[Step], tmp_path: Path, record_property) -> Path:
    """Take each step from a copy of the checkout; record the ones not run. Returns the last folder."""
    here = tmp_path / "checkout"
    if any(not step.not_run for step in steps):  # a page whose steps all say why not needs no copy
        shutil.copytree(ROOT, here, ignore=NOT_CHECKOUT)
    (home := tmp_path / "home").mkdir()
    env, cwd_file = user_env(home), tmp_path / "cwd"
    for step in steps:
        if step.not_run:
            first, *more = step.text.strip().splitlines()
            shown = f"`{first}`" + (f" and {len(more)} more line(s)" if more else "")
            record_property("docs step not run", f"{step.where} {shown}: {step.not_run}")
        elif step.title:
            (here / step.title).write_text(step.text)
        else:
            script = f"trap 'pwd > {cwd_file}' EXIT\n{step.text}"  # where the block left the shell
            done = run_command(["bash", "-euo", "pipefail", "-c", script], cwd=here, env=env)
            output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            assert done.returncode == 0, f"{step.where} failed:\n{step.text}\n{output}"
            here = Path(cwd_file.read_text().strip())
    return here


def test_steps_are_files_commands_or_marked_and_text_is_output(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        '```yaml title="a.yaml"\nx: 1\n```\n```bash\necho hi\n```\n```text\nout\n```\n'
        "<!-- not run by the tests: needs a key -->\n\n```bash\ncurl x\n```\n## Next\n```bash\nls\n```\n"
    )
    assert [(s.where, s.title, s.text, s.not_run) for s in page_steps(page)] == [
        ("page.md:1", "a.yaml", "x: 1\n", None),
        ("page.md:4", None, "echo hi\n", None),
        ("page.md:12", None, "curl x\n", "needs a key"),
        ("page.md:16", None, "ls\n", None),
    ]
    assert [s.text for s in page_steps(page, "Next")] == ["ls\n"]
    page.write_text("```python\nprint(1)\n```\n")
    with pytest.raises(AssertionError, match="title it, make it bash or mark it"):
        page_steps(page)


def test_a_step_runs_where_the_one_before_left_the_shell(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "copytree", lambda src, dst, ignore: Path(dst).mkdir())  # no checkout needed here
    steps = [Step("p:1", "mkdir -p ~/work\ncd ~/work\n"), Step("p:2", "x\n", title="f.txt"),
             Step("p:3", "cat f.txt > g.txt\n"), Step("p:4", "exit 1\n", not_run="never")]  # fmt: skip
    recorded = []
    last = run_steps(steps, tmp_path, lambda name, value: recorded.append((name, value)))
    assert last == tmp_path / "home" / "work" and (last / "g.txt").read_text() == "x\n"
    assert recorded == [("docs step not run", "p:4 `exit 1`: never")]


@pytest.mark.parametrize(("page", "section"), QUICK_STARTS, ids=lambda p: getattr(p, "name", p))
def test_the_quick_start_runs_or_says_why_not(page, section, tmp_path, record_property):
    steps = page_steps(page, section)
    assert steps, f"{page.name}: no steps in ## {section}"
    run_steps(steps, tmp_path, record_property)


@pytest.mark.slow
def test_the_tutorial_runs_and_its_report_shows_every_method(tmp_path, record_property):
    steps = page_steps(TUTORIAL)
    assert {s.title for s in steps} >= {"my_pool.yaml", "unit_task.py", "my_solver.py"}
    work = run_steps(steps, tmp_path, record_property)
    assert work == tmp_path / "home" / "my-tutorial"  # the folder the page has you make
    table = (work / "report" / "tables.md").read_text()
    section = table[table.index("Benchmarks the paper does not report") :]
    assert "SIMULATION" in section.splitlines()[0]
    rows = {line.split(" | ")[0].lstrip("| ") for line in section.splitlines() if line.startswith("| ")}
    assert {"cheap_then_check", "conductor [conductor fixed-workflows]", "single_worker (sim/mediocre)"} <= rows
    assert "(n=8x2)" in section and "±" in section
    shown = [line for body in shown_output(TUTORIAL) for line in body.splitlines() if line.strip()]
    assert shown, "the page shows the report's table"
    for line in shown:  # the page's example output is what the steps print (`...`: text left out)
        pattern = ".*".join(map(re.escape, line.split("...")))
        assert any(re.fullmatch(pattern, made) for made in table.splitlines()), f"not in the report: {line}"
    assert (work / "report" / "index.html").is_file()
    assert list((work / "logs-provider").glob("*.eval"))  # the conductor/<pool> model ran too
