"""mkdocs hooks (mkdocs.yml `hooks:`): the experiments' pages and plots on the site, no plot as a bare path.

- Each experiment keeps its README, command and plots beside its results in `experiments/`, outside
  `docs/`: `on_files` serves that folder at `experiments/` on the site, and the docs pages link to it as
  `../experiments/...`, which works on GitHub and, rewritten here, on the site.
- Every image on a page is a link to itself, so that one shown small (in a table) opens full size.
- A plot must be shown, not named: a `.png`/`.svg` path in a page's text (inline code included; fenced
  code blocks, links and images excepted) is a warning, which `mkdocs build --strict` turns into a failure.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.site_files")  # under "mkdocs": --strict counts its warnings
SERVED = "experiments"
SUFFIXES = {".md", ".png", ".svg", ".csv"}
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")  # the (target) of a link or an image
PLOT = re.compile(r"[\w./-]+\.(?:png|svg)\b")
IMG = re.compile(r"(<a\b[^>]*>\s*)?(<img\b[^>]*?\bsrc=\"([^\"]+)\"[^>]*>)")


def bare_plots(markdown: str) -> list[str]:
    """The plot paths a page names in its text instead of embedding or linking them."""
    text = TARGET.sub("]", FENCE.sub("", markdown))
    return PLOT.findall(text)


def linked_images(html: str) -> str:
    """Every <img> not already inside a link wrapped in a link to its own file."""
    return IMG.sub(lambda m: m[0] if m[1] else f'<a href="{m[3]}">{m[2]}</a>', html)


def outside_links(markdown: str, depth: int) -> str:
    """`../experiments/` links of a page `depth` folders below docs/, pointed at the served copy."""
    return markdown.replace("](" + "../" * (depth + 1) + SERVED + "/", "](" + "../" * depth + SERVED + "/")


def docs_links(markdown: str, depth: int) -> str:
    """`../../docs/x.md` links of a served experiment page `depth` folders down, pointed at the site's page."""
    return markdown.replace("](" + "../" * depth + "docs/", "](" + "../" * depth)


def on_files(files, config):
    from mkdocs.structure.files import File  # here, so the checks above import without mkdocs (tests)

    root = Path(config.config_file_path).parent
    for path in sorted((root / SERVED).rglob("*")):
        if path.is_file() and path.suffix in SUFFIXES:
            rel = path.relative_to(root).as_posix()
            files.append(File(rel, src_dir=str(root), dest_dir=config.site_dir,
                              use_directory_urls=config.use_directory_urls))  # fmt: skip
    return files


def on_page_markdown(markdown, page, config, files):
    for plot in bare_plots(markdown):
        log.warning(f"{page.file.src_uri} names the plot {plot} as a bare path: embed it, ![what it shows]({plot})")
    depth = page.file.src_uri.count("/")
    if page.file.src_uri.startswith(SERVED + "/"):
        return docs_links(markdown, depth)
    return outside_links(markdown, depth)


def on_page_content(html, page, config, files):
    return linked_images(html)
