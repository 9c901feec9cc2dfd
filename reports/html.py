"""The report page: one static HTML file of tables, plots and their provenance (pure; no JS).

The caller gives the sections (`Section`: text, `Table`s, plots such as `reports.plots.Plot`);
each table and plot names where it came from (`Provenance`: the logs, the commands). Plots are
referenced by their path relative to the page (the files stay next to it) or, with
`embed=True`, inlined as data URIs so the page is one self-contained file. Nothing is fetched
from the network. Every text is HTML-escaped: log text (model output, labels) is never markup.
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from reports.safe_text import writable, write_text

CELL_CHARS = 400  # per table cell: longer text is clipped (stated)
NOWRAP_CHARS = 32  # a cell whose lines are this short (a number, `61.11 ± 11.11 (n=6x3)`) stays on one line
LIST_SHOWN = 50  # logs listed per provenance block; the rest are counted

CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-size:12px}
th,td{border:1px solid #bbb;padding:2px 4px;text-align:left;vertical-align:top}
th{background:#eee;font-weight:600} tr:nth-child(even) td{background:#fafafa}
td{white-space:pre-line} td.n{white-space:pre} td:first-child{min-width:9em;max-width:22em}
.scroll{overflow-x:auto;max-width:100%}
tr.paper td{background:#eef3fb;color:#234;font-style:italic;border-top:none}
.markdown h4{font-size:14px} .markdown pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}
details.table>summary{cursor:pointer} summary h3{display:inline;font-size:15px}
figure{margin:1em 0} figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption,.note{font-size:13px;color:#444;white-space:pre-wrap}
ol.footnotes{list-style:none;padding:0;margin:.2em 0;font-size:12px;color:#444}
details{font-size:12px;color:#444;margin:.3em 0 1em} code{font-size:12px;overflow-wrap:anywhere}
nav{font-size:14px} nav ul ul{font-size:12px;columns:2} nav p{margin:.5em 0 0;font-weight:600}
.banner{background:#fff3cd;border:1px solid #e0c97f;padding:.4em .8em}
"""


class PlotLike(Protocol):
    """What the page needs of a plot (`reports.plots.Plot` has it)."""

    name: str
    title: str
    caption: str
    png: Path
    svg: Path
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Provenance:
    """Where a table or plot came from: the logs read and the commands that made them."""

    logs: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Table:
    """A table as shown: column names, rows of cells, a note, linked files (CSV, markdown)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""
    files: tuple[str | Path, ...] = ()
    provenance: Provenance = field(default_factory=Provenance)
    row_classes: tuple[str, ...] = ()  # per row, e.g. "paper" (the paper's values, styled apart)
    collapsed: str = ""  # when set: the table is one line (its title and this) that opens to show it
    footnotes: tuple[str, ...] = ()  # shown under the table as [1] ..., [2] ... (the cells hold the marks)

    @classmethod
    def from_frame(cls, title: str, frame: Any, **more: Any) -> Table:
        """A table from a pandas DataFrame (its columns and rows, index dropped; missing values
        of any dtype (NaN, NA, NaT) become empty cells)."""
        columns = tuple(str(c) for c in frame.columns)
        cells = frame.astype(object).where(frame.notna(), None)
        rows = tuple(tuple(r) for r in cells.itertuples(index=False, name=None))
        return cls(title, columns, rows, **more)


@dataclass(frozen=True)
class Section:
    """A part of the page: a heading, text, tables, plots, then the `later` tables."""

    title: str
    text: str = ""
    tables: Sequence[Table] = ()
    plots: Sequence[PlotLike] = ()
    provenance: Provenance | None = None
    markdown: str = ""  # rendered as HTML (markdown-it, raw HTML in it escaped) after the text
    plot_commands: tuple[str, ...] = ()  # the commands that remake the section's plots (their provenance)
    later: Sequence[Table] = ()  # tables after the plots
    legend: str = ""  # a longer explanation, folded under the text ("how to read these tables")


@dataclass(frozen=True)
class _Anchors:
    """The ids of one section's parts (every id on the page unique), for the parts and the contents."""

    section: str
    tables: list[str]
    plots_heading: str
    plots: list[str]
    later: list[str]


def _anchors(section: Section, ids: dict[str, int]) -> _Anchors:
    def table_ids(tables: Sequence[Table]) -> list[str]:
        return [_unique(ids, f"table-{_slug(t.title)}") for t in tables]

    head = _unique(ids, _slug(section.title))
    tables = table_ids(section.tables)
    plots_heading = _unique(ids, f"plots-{head}") if section.plots else ""
    return _Anchors(
        head,
        tables,
        plots_heading,
        [_unique(ids, f"plot-{_slug(p.name)}") for p in section.plots],
        table_ids(section.later),
    )


def _contents(sections: Sequence[Section], anchors: Sequence[_Anchors]) -> str:
    """The contents: every section, and under it each of its tables and plots."""
    items = []
    for s, a in zip(sections, anchors, strict=True):
        parts = [(t.title, x) for t, x in zip(s.tables, a.tables, strict=True)]
        parts += [("Plots", a.plots_heading)] if s.plots else []
        parts += [(t.title, x) for t, x in zip(s.later, a.later, strict=True)]
        sub = "".join(f'<li><a href="#{x}">{_e(title)}</a></li>' for title, x in parts)
        items.append(f'<li><a href="#{a.section}">{_e(s.title)}</a>' + (f"<ul>{sub}</ul>" if sub else "") + "</li>")
    return "<nav><p>Contents</p><ul>" + "".join(items) + "</ul></nav>"


def render_page(
    sections: Sequence[Section],
    page: str | Path,
    *,
    title: str = "conductor-bench report",
    intro: str = "",
    banner: str = "",
    embed: bool = False,
    generated: str | None = None,
) -> str:
    """The page's HTML; image paths are made relative to `page` (the file it will be written to)."""
    base = Path(page).resolve().parent
    when = generated or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="note">generated {_e(when)}</p>',
    ]
    if banner:
        out.append(f'<p class="banner">{_e(banner)}</p>')
    if intro:
        out.append(f'<p class="note">{_e(intro)}</p>')
    ids: dict[str, int] = {}  # every id on the page is unique
    anchors = [_anchors(s, ids) for s in sections]
    out.append(_contents(sections, anchors))
    for section, anchor in zip(sections, anchors, strict=True):
        out.append(_section(section, anchor, base, embed))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_page(path: str | Path, sections: Sequence[Section], **options: Any) -> Path:
    """Write the page (options: `render_page`'s) and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, render_page(sections, path, **options))
    return path


def _section(section: Section, anchors: _Anchors, base: Path, embed: bool) -> str:
    out = [f'<section id="{anchors.section}"><h2>{_e(section.title)}</h2>']
    if section.text:
        out.append(f'<p class="note">{_e(section.text)}</p>')
    if section.legend:
        out.append(
            f'<details><summary>how to read these tables</summary><p class="note">{_e(section.legend)}</p></details>'
        )
    if section.markdown:
        out.append(markdown_html(section.markdown))
    for table, anchor in zip(section.tables, anchors.tables, strict=True):
        out.append(_table(table, base, anchor))
    if section.plots:
        out.append(f'<h3 id="{anchors.plots_heading}">Plots</h3>')
    for plot, anchor in zip(section.plots, anchors.plots, strict=True):
        out.append(_plot(plot, base, embed, anchor, section.plot_commands))
    for table, anchor in zip(section.later, anchors.later, strict=True):
        out.append(_table(table, base, anchor))
    if section.provenance:
        out.append(_provenance(section.provenance, "section"))
    out.append("</section>")
    return "\n".join(out)


def markdown_html(text: str) -> str:
    """Markdown as HTML (CommonMark with tables, by markdown-it, which Inspect's `rich` brings); raw HTML
    in the text is escaped and unsafe link schemes (javascript:) are not linked. Its headings are two levels
    down (`##` is h4): they sit under the section's h2 and stay out of the contents."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
    return '<div class="markdown">' + md.renderer.render(tokens, md.options, {}) + "</div>"


def _row(values: Sequence[Any], kind: str) -> str:
    cells = "".join(f"<td{_nowrap(v)}>{_cell(v)}</td>" for v in values)
    return (f'<tr class="{_e(kind)}">' if kind else "<tr>") + cells + "</tr>"


def _nowrap(value: Any) -> str:
    """A cell whose lines are all short stays as it is laid out (its line breaks kept, none added)."""
    return ' class="n"' if value is not None and max(map(len, str(value).split("\n"))) <= NOWRAP_CHARS else ""


def _table(table: Table, base: Path, anchor: str) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    kinds = table.row_classes or ("",) * len(table.rows)
    body = "".join(_row(row, kind) for row, kind in zip(table.rows, kinds, strict=True))
    if table.collapsed:
        out = [
            f'<details class="table"><summary><h3 id="{anchor}">{_e(table.title)}</h3>: {_e(table.collapsed)}</summary>'
        ]
    else:
        out = [f'<h3 id="{anchor}">{_e(table.title)}</h3>']
    if table.rows:
        out.append(f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>')
    else:
        out.append('<p class="note">(no rows: the logs hold nothing for this table)</p>')
    if table.footnotes:
        out.append(
            '<ol class="footnotes">'
            + "".join(f"<li>[{i}] {_e(n)}</li>" for i, n in enumerate(table.footnotes, 1))
            + "</ol>"
        )
    if table.note:
        out.append(f'<p class="note">{_e(table.note)}</p>')
    if table.files:
        links = ", ".join(f'<a href="{_href(f, base)}">{_e(Path(f).name)}</a>' for f in table.files)
        out.append(f'<p class="note">files: {links}</p>')
    out.append(_provenance(table.provenance, "table"))
    if table.collapsed:
        out.append("</details>")
    return "\n".join(out)


def _plot(plot: PlotLike, base: Path, embed: bool, anchor: str, commands: tuple[str, ...] = ()) -> str:
    if embed:
        src = "data:image/png;base64," + base64.b64encode(_existing(plot.png).read_bytes()).decode("ascii")
    else:
        src = _href(plot.png, base)
    svg = _href(plot.svg, base)
    return (
        f'<figure id="{anchor}"><img src="{src}" alt="{_e(plot.title)}">'
        f'<figcaption>{_e(plot.caption)} (<a href="{svg}">SVG</a>)</figcaption></figure>\n'
        + _provenance(Provenance(logs=tuple(plot.sources), commands=commands), "plot")
    )


def _provenance(prov: Provenance, what: str) -> str:
    if not (prov.logs or prov.commands or prov.note):
        return f'<p class="note">provenance of this {what}: not recorded</p>'
    parts = [
        f"<details><summary>provenance of this {what}: {len(prov.logs)} log(s), "
        f"{len(prov.commands)} command(s)</summary>"
    ]
    if prov.note:
        parts.append(f'<p class="note">{_e(prov.note)}</p>')
    if prov.commands:
        parts.append(
            "<p>commands:</p><ul>" + "".join(f"<li><code>{_e(c)}</code></li>" for c in prov.commands) + "</ul>"
        )
    if prov.logs:
        shown = "".join(f"<li><code>{_e(log)}</code></li>" for log in prov.logs[:LIST_SHOWN])
        more = len(prov.logs) - LIST_SHOWN
        parts.append("<p>logs:</p><ul>" + shown + (f"<li>... and {more} more</li>" if more > 0 else "") + "</ul>")
    parts.append("</details>")
    return "".join(parts)


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"the report links {path}, which does not exist; fix: write the plots/tables "
            "before the page (reports.plots.eval_plots, training_plots)"
        )
    return path


def _href(path: str | Path, base: Path) -> str:
    """A file's address relative to the page's folder (the file must exist)."""
    rel = os.path.relpath(_existing(path).resolve(), base)
    return _e(quote(Path(rel).as_posix()))


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    text = str(value)
    if len(text) > CELL_CHARS:
        text = text[:CELL_CHARS] + f"... [{len(text) - CELL_CHARS} more chars]"
    return _e(text)


def _unique(ids: dict[str, int], slug: str) -> str:
    """`slug`, or `slug-2`, `slug-3` ... when the page already has it."""
    ids[slug] = ids.get(slug, 0) + 1
    return slug if ids[slug] == 1 else f"{slug}-{ids[slug]}"


def _slug(text: object) -> str:
    """An id for an anchor: lower-case letters, digits and dashes (never markup)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower())[:60].strip("-") or "x"


def _e(text: object) -> str:
    return html.escape(writable(str(text)), quote=True)
