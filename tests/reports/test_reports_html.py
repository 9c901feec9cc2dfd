"""reports.html: the static report page; it renders in headless Chromium (every table and image)."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from matplotlib.figure import Figure
from waits import run_command

from reports import plots
from reports import synthetic as syn
from reports.frame import load_samples
from reports.html import LIST_SHOWN, Provenance, Section, Table, render_page, write_page

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
VIEWPORT = 1280  # px: the window the page must fit
# added to a copy of the page under test only (the page itself has no script): after load, it
# decodes every <img> and every linked PNG/SVG and writes what loaded into the DOM as JSON
PROBE = """<script>
window.addEventListener('load', () => {
  const hrefs = [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))
    .filter(h => /\\.(svg|png)$/i.test(h));
  const probe = h => new Promise(done => { const i = new Image();
    i.onload = () => done([h, i.naturalWidth > 0]); i.onerror = () => done([h, false]); i.src = h; });
  Promise.all(hrefs.map(probe)).then(links => {
    const out = document.createElement('pre'); out.id = 'render-check';
    out.textContent = JSON.stringify({
      images: [...document.images].map(i => [i.getAttribute('src').slice(0, 120), i.complete && i.naturalWidth > 0]),
      links: links,
      tables: [...document.querySelectorAll('table')].map(t => [t.rows.length, t.getBoundingClientRect().height])});
    document.body.appendChild(out);
  });
});
</script>"""


def small_plots(folder: Path, n: int = 2) -> list[plots.Plot]:
    """n small saved figures (the page does not care what they show)."""
    out = []
    for i in range(n):
        fig = Figure(figsize=(2, 1.5), dpi=50)
        fig.subplots().plot([0, 1], [i, 1 - i])
        png, svg = plots.save_figure(fig, folder, f"p{i}")
        out.append(plots.Plot(f"p{i}", f"plot {i}", "a line", png, svg, "sim", ("logs/a.eval",)))
    return out


def table(title="Table 1", rows=((1, "a"),), **more) -> Table:
    return Table(title, ("n", "method"), tuple(rows), **more)


def test_everything_from_logs_is_escaped(tmp_path):
    evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    page = render_page(
        [
            Section(
                evil,
                text=evil,
                tables=[
                    table(
                        evil,
                        [(evil, None), (float("nan"), 2)],
                        note=evil,
                        provenance=Provenance((evil,), (evil,), evil),
                    )
                ],
            )
        ],
        tmp_path / "r.html",
        title=evil,
        intro=evil,
        banner=evil,
    )
    assert "<script" not in page.lower() and "<img" not in page.lower() and 'onerror="' not in page
    assert page.count(html.escape(evil)) >= 8  # title x2, banner, intro, nav, heading, text, table, cell, ...
    assert "<td></td>" in page  # None and NaN cells are empty


def test_plots_are_relative_files_and_must_exist(tmp_path):
    folder = tmp_path / "plots dir"
    folder.mkdir()
    out = small_plots(folder, 3)
    page = write_page(tmp_path / "report.html", [Section("Plots", plots=out)])
    text = page.read_text()
    srcs = re.findall(r'<img src="([^"]+)"', text)
    assert len(srcs) == len(out) and all(s.startswith("plots%20dir/") for s in srcs)
    assert all((tmp_path / unquote(s)).is_file() for s in srcs)
    assert not re.search(r'(src|href)="(https?:)?//', text)  # nothing from the network
    out[0].png.unlink()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_page(tmp_path / "report.html", [Section("Plots", plots=out)])


def test_table_from_frame_blanks_missing_values_of_any_dtype(tmp_path):
    import pandas as pd

    frame = pd.DataFrame(
        {
            "n": pd.array([1, None], dtype="Int64"),
            "x": pd.array([0.5, None], dtype="double[pyarrow]"),
            "t": [pd.NaT, pd.Timestamp("2026-01-01")],
            "s": ["<b>", None],
        }
    )
    t = Table.from_frame("T", frame)
    assert t.columns == ("n", "x", "t", "s") and t.rows[0][1:] == (0.5, None, "<b>") and t.rows[1][:2] == (None, None)
    text = render_page([Section("S", tables=[t])], tmp_path / "r.html")
    assert '<td class="n">1</td><td class="n">0.5</td><td></td><td class="n">&lt;b&gt;</td>' in text
    assert "NA" not in text and "NaT" not in text


def test_ids_are_unique_on_the_page(tmp_path):
    (tmp_path / "plots").mkdir()
    figures = small_plots(tmp_path / "plots")
    sections = [
        Section("Pool", tables=[table(), table()], plots=figures),
        Section("Pool", tables=[table()], plots=figures),
    ]
    ids = re.findall(r' id="([^"]+)"', render_page(sections, tmp_path / "r.html"))
    assert len(ids) == len(set(ids)) == 2 + 3 + 2 + 4  # sections, tables, a plots heading per section, plots
    assert ids[:3] == ["pool", "table-table-1", "table-table-1-2"] and "pool-2" in ids and "plot-p0-2" in ids


def test_embed_inlines_the_images(tmp_path):
    (tmp_path / "plots").mkdir()
    out = small_plots(tmp_path / "plots")
    text = render_page([Section("Plots", plots=out)], tmp_path / "r.html", embed=True)
    assert text.count('<img src="data:image/png;base64,') == 2 and 'src="plots/' not in text


def test_provenance_tables_and_empty_tables(tmp_path):
    logs = tuple(f"logs/{i}.eval" for i in range(LIST_SHOWN + 3))
    csv = tmp_path / "t1.csv"
    csv.write_text("n,method\n")
    text = render_page(
        [
            Section(
                "Tables",
                tables=[
                    table(provenance=Provenance(logs, ("nox -s reproduce_tables -- --logs logs",)), files=(csv,)),
                    table("Table 2", rows=()),
                ],
            )
        ],
        tmp_path / "r.html",
    )
    assert "1 log(s)" not in text and f"{LIST_SHOWN + 3} log(s), 1 command(s)" in text
    assert "logs/0.eval" in text and f"logs/{LIST_SHOWN}.eval" not in text and "... and 3 more" in text
    assert "<code>nox -s reproduce_tables -- --logs logs</code>" in text
    assert '<a href="t1.csv">t1.csv</a>' in text
    assert "no rows: the logs hold nothing for this table" in text
    assert "provenance of this table: not recorded" in text


# with every <details> opened: the elements that reach past the window's edges, the contents' links, the
# h2/h3 headings' ids (an h2's: its section's) and the links that lead nowhere
LAYOUT = """<script>
window.addEventListener('load', () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const width = document.documentElement.clientWidth;
  const wide = [...document.body.querySelectorAll('*')].filter(e => {
      const r = e.getBoundingClientRect(); return r.width > 0 && (r.right > width + 1 || r.left < -1); })
    .map(e => e.tagName + ': ' + (e.textContent || e.getAttribute('src') || '').slice(0, 80));
  const links = [...document.querySelectorAll('nav a')].map(a => a.getAttribute('href'));
  const out = document.createElement('pre'); out.id = 'render-check';
  out.textContent = JSON.stringify({width: width, scroll: document.documentElement.scrollWidth, wide: wide,
    links: links, headings: [...document.querySelectorAll('h2, h3')]
      .map(h => h.id || (h.tagName == 'H2' && h.parentElement.id) || h.textContent),
    dead: links.filter(h => !h.startsWith('#') || !document.getElementById(h.slice(1)))});
  document.body.appendChild(out);
});
</script>"""


def browser() -> str | None:
    return next((b for b in map(shutil.which, BROWSERS) if b), None)


def render_check(page: Path, exe: str, script: str = PROBE) -> dict:
    """Load a copy of `page` (the probe `script` added) in headless Chromium, 1280 px wide; what the probe saw."""
    probe = page.with_name("probe-" + page.name)
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    done = run_command(
        [
            exe,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={page.parent / '.chromium'}",
            f"--window-size={VIEWPORT},2000",
            "--virtual-time-budget=10000",
            "--dump-dom",
            probe.as_uri(),
        ],
    )
    found = re.search(r'<pre id="render-check">(.*?)</pre>', done.stdout, re.S)
    assert found, f"the probe did not run (rc {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def problems(page: Path, result: dict, plots_: list, tables: int) -> list[str]:
    """Every broken image, missing file or unrendered table of a checked page."""
    bad = [f"image not rendered: {src}" for src, ok in result["images"] + result["links"] if not ok]
    if len(result["images"]) != len(plots_):
        bad.append(f"{len(result['images'])} images on the page, {len(plots_)} plots given")
    bad += [f"table {i} empty or not laid out" for i, (n, h) in enumerate(result["tables"]) if n < 2 or h <= 0]
    if len(result["tables"]) != tables:
        bad.append(f"{len(result['tables'])} tables rendered, {tables} given")
    hrefs = re.findall(r'<a href="([^"#][^"]*)"', page.read_text())
    bad += [f"missing file: {h}" for h in hrefs if not (page.parent / unquote(html.unescape(h))).is_file()]
    return bad


NO_BROWSER = "no chromium on PATH (`nox -s tests` installs it; else apt-get install chromium)"


EVIL = '<img src=x onerror="alert(1)"><script>alert(2)</script> $\\frac{'


def report_from_logs(tmp_path: Path) -> tuple[Path, list, int]:
    """Hand-built Inspect logs (a conductor whose subtasks hold markup, a single worker) read by the
    loader, plotted and paged as the build does; (page, plots, tables)."""
    workers = ["sim/math-strong", "sim/choice-strong"]
    logs = tmp_path / "logs"
    for task in ("math500", "mmlu"):
        rows = []
        for i in range(4):
            steps = [syn.step(0, 0, workers[0], subtask=EVIL), syn.step(1, 1, workers[1], [0], subtask="Check it.")]
            meta = syn.record("conductor", workers, steps[: 1 + i % 2], conductor="local/smollm2-135m")
            rows.append(syn.sample(f"{task}-{i}", 1, "CI"[i % 2], meta))
        syn.write_log(logs, task, "conductor", {"pool": "sim"}, rows)
        one = [
            syn.sample(f"{task}-{i}", 1, "C", syn.record("single_worker", workers, [syn.step(0, 1, workers[1])]))
            for i in range(4)
        ]
        syn.write_log(logs, task, "single_worker", {"pool": "sim", "worker": 1}, one)
    frame = load_samples(logs)
    out = tmp_path / "report"
    figures = plots.eval_plots(frame, out / "plots")
    points = plots.method_points(frame).reset_index().round(4)
    csv = out / "tables" / "methods.csv"
    csv.parent.mkdir(parents=True)
    points.to_csv(csv, index=False)
    prov = Provenance(tuple(sorted(frame["log"].unique())), ("python -m reports build --logs logs --out report",))
    tables = [
        Table.from_frame("Methods (SIMULATION)", points, files=(csv,), provenance=prov),
        Table.from_frame("Samples", frame[["label", "task", "sample_id", "graph"]].head(6)),
    ]
    page = write_page(
        out / "index.html",
        [Section("Tables", tables=tables), Section("Plots", plots=figures)],
        banner="SIMULATION: simulated workers",
    )
    return page, figures, len(tables)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, list, int]:
    return report_from_logs(tmp_path_factory.mktemp("report"))


def test_report_from_logs_is_escaped_and_complete(report):
    page, figures, _ = report
    text = page.read_text()
    kinds = ["accuracy-cost", "workers", "steps", "strategies", "workflow"]
    assert [p.name for p in figures] == [f"sim-{k}" for k in kinds]
    assert "<script" not in text and "<img src=x" not in text and "&lt;img src=x onerror=" in text
    assert text.count("<img ") == len(figures) and "SIMULATION" in text
    assert "<code>python -m reports build --logs logs --out report</code>" in text


@pytest.mark.skipif(browser() is None, reason=NO_BROWSER)
def test_page_renders_in_headless_chromium(report, tmp_path):
    exe = browser()
    built, figures, tables = report
    shutil.copytree(built.parent, tmp_path / "report")  # the copy is broken below, not the shared one
    page = tmp_path / "report" / built.name
    figures = [
        dataclasses.replace(p, png=page.parent / "plots" / p.png.name, svg=page.parent / "plots" / p.svg.name)
        for p in figures
    ]
    result = render_check(page, exe)
    assert problems(page, result, figures, tables) == []
    assert len(result["links"]) == len(figures)  # every SVG decoded too

    # a deliberately broken image (the file gone after the page was written) and a missing CSV fail
    figures[1].png.unlink()
    figures[2].svg.unlink()
    (page.parent / "tables" / "methods.csv").unlink()
    bad = problems(page, render_check(page, exe), figures, tables)
    assert sorted(bad) == sorted(
        [
            f"image not rendered: plots/{figures[1].png.name}",
            f"image not rendered: plots/{figures[2].svg.name}",
            f"missing file: plots/{figures[2].svg.name}",
            "missing file: tables/methods.csv",
        ]
    )


def test_contents_lists_every_section_table_and_plots(tmp_path):
    (tmp_path / "plots").mkdir()
    sections = [
        Section(
            "Pool",
            tables=[table()],
            plots=small_plots(tmp_path / "plots"),
            later=[table("Table 2"), table("Big", collapsed="99 rows")],
        ),
        Section("End"),
    ]
    text = render_page(sections, tmp_path / "r.html")
    heads = re.findall(r'<section id="([^"]+)"><h2>|<h3 id="([^"]+)"', text)
    heads = [a or b for a, b in heads]
    nav = re.findall(r'<a href="#([^"]+)"', text.split("</nav>")[0])
    assert heads == nav == ["pool", "table-table-1", "plots-pool", "table-table-2", "table-big", "end"]
    assert text.index("plot-p1") < text.index('id="table-table-2"')  # the later tables after the plots
    assert '<details class="table"><summary><h3 id="table-big">Big</h3>: 99 rows</summary>' in text


def test_footnotes_stand_under_their_table_and_markdown_headings_stay_out_of_the_contents(tmp_path):
    text = render_page(
        [
            Section(
                "S",
                markdown="## Table 1\n\ntext",
                tables=[table(rows=(("x [1]", 1),), footnotes=("<b>a note</b>",), note="the note")],
            )
        ],
        tmp_path / "r.html",
    )
    assert '<ol class="footnotes"><li>[1] &lt;b&gt;a note&lt;/b&gt;</li></ol>' in text
    assert text.index("</table>") < text.index('<ol class="footnotes">') < text.index('<p class="note">the note')
    assert "<h4>Table 1</h4>" in text and "<h2>Table 1" not in text


def paper_pool_logs(logs: Path) -> None:
    """The widest tables: the paper's unconstrained pool on its seven benchmarks (our cells and the paper's
    beside them), and a simulated pool with a scripted conductor and a long row label."""
    paper = [
        "google/gemini-2.5-pro",
        "anthropic/claude-sonnet-4-20250514",
        "openai/gpt-5",
        "vllm/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        "vllm/google/gemma-3-27b-it",
        "vllm/Qwen/Qwen3-32B",
        "vllm/Qwen/Qwen3-32B",
    ]
    for task in ("math500", "mmlu", "rlpr", "livecodebench", "aime2025", "bigcodebench", "gpqa_diamond"):
        one = syn.record("single_worker", paper, [syn.step(0, 2, paper[2])], cost=0.02)
        syn.write_log(
            logs,
            task,
            "single_worker",
            {"pool": "paper", "worker": 2},
            [syn.sample(f"{task}-{i}", 1, "CI"[i % 2], one) for i in range(3)],
            total=4,
        )
    sim = ["sim/math-strong", "sim/choice-strong", "sim/mediocre", "sim/premium"]
    for task in ("math500", "mmlu"):
        steps = [syn.step(0, 0, sim[0]), syn.step(1, 1, sim[1], [0])]
        led = syn.record("conductor", sim, steps, conductor="scripted/fixed-workflows")
        syn.write_log(
            logs, task, "conductor", {"pool": "sim"}, [syn.sample(f"{task}-{i}", 1, "CI"[i % 2], led) for i in range(3)]
        )
        for args in ({"worker": 0}, {"worker": 3, "max_tokens": 20480}):
            one = syn.record("single_worker", sim, [syn.step(0, args["worker"], sim[args["worker"]])])
            syn.write_log(
                logs,
                task,
                "single_worker",
                {"pool": "sim", **args},
                [syn.sample(f"{task}-{i}", 1, "C", one) for i in range(3)],
            )


@pytest.fixture(scope="module")
def built_report(tmp_path_factory) -> Path:
    from reports.build import build

    root = tmp_path_factory.mktemp("built")
    paper_pool_logs(root / "logs")
    return build(root / "logs", root / "report", progress=lambda line: None, command="nox -s reproduce_tables").page


@pytest.mark.slow
def test_the_built_page_pairs_by_method_and_footnotes_the_scripted_conductor(built_report):
    text = built_report.read_text()
    sim = text.split('<section id="simulation-pool-sim')[1]
    assert "↳ paper: Conductor" in sim and "↳ paper: GPT-5" not in sim and "↳ paper: R1-Distill-32B" not in sim
    assert "no paper row: the paper&#x27;s Table 1 has this method only with its named models" in sim
    oracle = sim.split('<h3 id="table-oracle-gap')[1].split("</ol>")[0]
    assert "conductor [conductor fixed-workflows] [1]" in oracle and "[1] a scripted conductor, no model" in oracle
    paper = text.split('<section id="pool-paper')[1].split('<section id="simulation-pool-sim')[0]
    assert "\npaper 99</td>" in paper  # GPT-5's MATH500 in the paper, under ours


@pytest.mark.skipif(browser() is None, reason=NO_BROWSER)
def test_the_built_page_fits_1280_px_and_its_contents_reach_every_heading(built_report):
    seen = render_check(built_report, browser(), LAYOUT)
    assert seen["wide"] == [] and seen["scroll"] <= seen["width"] <= VIEWPORT, seen["wide"][:10]
    assert seen["dead"] == [] and len(seen["headings"]) > 10
    assert [f"#{h}" for h in seen["headings"]] == seen["links"]  # every h2/h3 in the contents, in page order
