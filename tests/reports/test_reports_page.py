"""The report page built from the committed example logs (docs/report-example/eval-logs/sim: the simulated
pool, the scripted conductor, single workers and mixture-of-agents on MATH500, MMLU and GPQA-Diamond):
what a reader sees where the rows are."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reports import tables
from reports.build import build, table_on_page
from reports.frame import load_samples

LOGS = Path(__file__).parents[2] / "docs" / "report-example" / "eval-logs" / "sim"


class Page(HTMLParser):
    """The page's tables as rows of (class of the row, cell texts), keyed by the title above each; the
    text outside tags; the provenance summaries."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[tuple[str, list[str]]]] = {}
        self.text: list[str] = []
        self.summaries: list[str] = []
        self.title = ""
        self._in: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):  # noqa: ANN001
        self._in.append(tag)
        if tag in ("h3", "summary"):
            self.title = ""
        if tag == "table":
            self.tables[self.title] = []
        if tag == "tr":
            self.tables[self.title].append((dict(attrs).get("class") or "", []))
        if tag == "td":
            self._cell = []

    def handle_endtag(self, tag):  # noqa: ANN001
        if tag == "td" and self._cell is not None:
            self.tables[self.title][-1][1].append("".join(self._cell))
            self._cell = None
        if self._in:
            self._in.pop()

    def handle_data(self, data):  # noqa: ANN001
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        elif self._in and self._in[-1] in ("h3", "summary"):
            self.title += data
            if data.startswith("provenance of this"):
                self.summaries.append(data)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("page")
    report = build(LOGS, out, progress=lambda line: None, command="python -m reports build --logs X --out Y")
    parsed = Page()
    parsed.feed(report.page.read_text())
    return parsed, report.page.read_text()


def table(parsed: Page, start: str) -> list[tuple[str, list[str]]]:
    found = [rows for title, rows in parsed.tables.items() if title.startswith(start)]
    assert len(found) == 1, (start, list(parsed.tables))
    return found[0]


@pytest.mark.slow
def test_the_papers_row_stands_under_the_row_it_reproduces(page):
    parsed, _ = page
    rows = table(parsed, "Table 7:")
    labels = [cells[0] for _, cells in rows if cells]
    conductor = next(i for i, label in enumerate(labels) if label.startswith("conductor [conductor fixed-workflows]"))
    kind, cells = rows[conductor + 2]  # the header row holds no cells
    assert kind == "paper" and cells[0] == "↳ paper: Conductor" and cells[1] == "89.33"  # Table 7 MATH500
    assert cells[5] == "91.23\n(2 of 4)"  # the paper's average over the two benchmarks the row ran, as ours
    assert "↳ paper: MoA" in labels  # and under mixture-of-agents


def test_a_simulated_worker_is_paired_with_no_named_model_and_says_so(page):
    parsed, html = page
    rows = table(parsed, "Table 1:")
    labels = [cells[0] for _, cells in rows if cells]
    paper = [label for label in labels if label.startswith("↳ paper")]
    assert paper == ["↳ paper: Conductor"]  # not R1-Distill-32B under sim/premium nor GPT-5 under sim/mediocre
    premium = next(label for label in labels if label.startswith("single_worker (sim/premium)"))
    mark = premium.rsplit(" ", 1)[1]
    notes = html.split('<h3 id="table-table-1-')[1].split("</ol>")[0]
    assert f"<li>{mark} no paper row: the paper&#x27;s Table 1 has this method only with its named models" in notes


def test_rows_say_what_they_are_and_carry_the_papers_names(page):
    parsed, html = page
    labels = [cells[0] for _, cells in table(parsed, "Table 7:") if cells]
    scripted = next(label for label in labels if label.startswith("conductor [conductor fixed-workflows]"))
    assert scripted.endswith(" [1]")  # the note, a footnote under the table
    notes = html.split('<h3 id="table-table-7-')[1].split("</ol>")[0]
    assert "<li>[1] a scripted conductor, no model: it writes fixed workflows chosen by a hash of the question" in notes
    assert any(label.startswith("mixture_of_agents, the paper's MoA") for label in labels)


def test_the_oracle_gap_says_no_model_conducts_the_scripted_conductor(page):
    parsed, html = page
    rows = [cells[1] for _, cells in table(parsed, "Oracle gap") if cells]
    assert "conductor [conductor fixed-workflows] [1]" in rows
    assert "<li>[1] a scripted conductor, no model" in html.split('<h3 id="table-oracle-gap')[1].split("</ol>")[0]


def test_no_raw_markdown_in_the_page(page):
    parsed, html = page
    text = "".join(parsed.text)
    assert "# Missing cells" not in text and "```" not in text and "\n## " not in text
    missing = html.split(">Missing cells</h2>")[1]
    assert "<h4>Table 1: unconstrained setting" in missing and "<pre><code>python -m solvers.matrix" in missing


def test_rows_not_run_are_one_line_and_the_papers_tables_collapsed(page):
    _, html = page
    before_missing = html.split(">Missing cells</h2>")[0]
    assert "(not run)" not in before_missing and "Not run (see Missing cells): conductor (few_shot=" in html
    collapsed = re.findall(r'<details class="table"><summary><h3 id="[^"]+">([^<]*)</h3>([^<]*)</summary>', html)
    paper = [(title, text) for title, text in collapsed if unescape(title).startswith("The paper's Table")]
    assert len(paper) == len(tables.reference_tables())
    assert all(text.endswith("rows as the paper prints them") for _, text in paper)
    # the long per-pair table folded, after the plots
    assert ("Paired comparisons on the same samples", ": 60 rows") in collapsed
    assert html.index('id="plot-sim-paired"') < html.index('id="table-paired-comparisons')


def test_a_table_without_logged_rows_is_one_line(tmp_path):
    frame = load_samples(LOGS)
    spec = tables.Spec("x", "Table X: routers", "constrained", ("MMLU",), rows=lambda key: key == "router_dc")
    built = tables.build_table(spec, frame, None, extra_rows=[("router_dc", "router_dc")])
    shown = table_on_page(built, frame, tmp_path, {}, "")
    assert shown.collapsed == "nothing logged (1 row(s) not run)" and not shown.rows
    assert "Not run (see Missing cells): router_dc, the paper's RouterDC." in shown.note


def test_short_cells_do_not_wrap(page):
    _, html = page
    assert re.search(r'<td class="n">\d+\.\d\d ± \d+\.\d\d\nn=8x1</td>', html)  # the count on a line of its own


def test_plots_count_the_commands_of_their_tables(page):
    parsed, _ = page
    plots = [s for s in parsed.summaries if s.startswith("provenance of this plot")]
    assert plots and not any(s.endswith(" 0 command(s)") for s in plots)


def test_aiq_and_apgr_per_benchmark_with_their_sources(page):
    parsed, html = page
    rows = table(parsed, "AIQ and APGR")
    benchmarks = {cells[0] for _, cells in rows if cells}
    assert benchmarks == {"GPQA-D", "MATH500", "MMLU"}
    assert "RouterBench" in html and "RouteLLM" in html and "arXiv:2403.12031" in html
