"""Screenshots of the HTML report in a real browser (headless Chromium), one per page: the landing
page, each category the report has (its studies', "Shared data" where it has one), and its first
table and first figure shown in place.

    python -m tests.report_screenshots report.html screenshots/     # Chromium: apt-get install chromium

The report is one page of JavaScript without addresses for its views, so each view is a copy of
the report that opens it when loaded (the report's own ``app.showCategory`` and
``app.setView``, as its buttons do). Used by tests/test_workflow.py, which skips it where Chromium is absent.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def views(categories: list[str], results: list[str]) -> dict[str, str]:
    """Name -> the JavaScript that opens the view."""
    out = {"landing": ""}
    out.update({f"category-{c}": f"app.showCategory({json.dumps(c)})" for c in categories})
    for path in results:
        # as the result's view button does: its information on the left, the page or image in place
        content = "html" if path.endswith(".html") else "img"
        out[f"result-{Path(path).name}"] = (
            f"app.setView({{navbarMode: 'resultinfo', resultPath: {json.dumps(path)}, content: '{content}', "
            f"contentPath: results[{json.dumps(path)}].data_uri}})"
        )
    return out


def run_in_chromium(page: Path, copy: Path, script: str, output: str, chromium: str, size: str) -> str:
    """Open a copy of ``page`` with ``script`` added (a <script> element) in headless Chromium at
    ``size``, with ``output`` its output flag (--screenshot=PNG, --dump-dom); returns what it printed."""
    # the last </body>: the report's scripts hold the string too
    head, tag, tail = page.read_text(encoding="utf-8").rpartition("</body>")
    copy.write_text(head + script + tag + tail, encoding="utf-8")
    try:
        return subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--window-size={size}",
                "--virtual-time-budget=5000",
                output,
                copy.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    finally:
        copy.unlink()


def screenshot(report: Path, script: str, png: Path, chromium: str, size: str = "1400,1000") -> None:
    opener = f"<script>window.addEventListener('load', () => setTimeout(() => {{ {script} }}, 500));</script>"
    run_in_chromium(report, png.with_suffix(".html"), opener, f"--screenshot={png}", chromium, size)


def measure(page: Path, script: str, expression: str, chromium: str, size: str = "1400,1000"):
    """What a JavaScript ``expression`` gives (as JSON) in ``page`` opened at ``size`` in Chromium,
    after ``script`` opened a view: layout as the browser made it (positions, widths)."""
    probe = (
        "<script>window.addEventListener('load', () => setTimeout(() => { "
        f"{script}; setTimeout(() => document.body.setAttribute('data-measured', "
        f"JSON.stringify({expression})), 800); }}, 500));</script>"
    )
    copy = page.with_name(f".measure-{page.name}")
    dom = run_in_chromium(page, copy, probe, "--dump-dom", chromium, size)
    import html

    found = re.search(r'data-measured="([^"]*)"', dom)
    if found is None:
        raise RuntimeError(f"{page}: the page gave no measurement")
    return json.loads(html.unescape(found.group(1)))


# The landing page's headline block (the paragraph "Headline numbers" and the list after it):
# its top and bottom in the window, and the window's height
HEADLINE = """(() => {
  const start = [...document.querySelectorAll('p')].find(p => p.textContent.startsWith('Headline numbers'));
  if (!start) return null;
  const list = start.nextElementSibling;
  return {top: start.getBoundingClientRect().top, bottom: list.getBoundingClientRect().bottom,
          height: window.innerHeight};
})()"""
# the width a result page is shown at in the report (its frame's)
FRAME_WIDTH = "document.querySelector('iframe') ? document.querySelector('iframe').clientWidth : null"
# a page wider than its window needs horizontal scrolling
OVERFLOW = "({content: document.documentElement.scrollWidth, window: window.innerWidth})"


def contents(report: Path) -> dict[str, dict[str, list[str]]]:
    """The report's categories, each its subcategories' result paths, as the report itself lists
    them (its ``var categories``): what one report has, not another's."""
    found = re.search(r"\bvar categories = (\{.*?\});\n", report.read_text(encoding="utf-8"))
    if found is None:
        raise RuntimeError(f"{report}: no list of categories (not a Snakemake report?)")
    return json.loads(found.group(1))


def shown(report: Path) -> tuple[list[str], list[str]]:
    """The views a report's screenshots show: each of its categories, and its first table and first
    figure shown in place."""
    categories = contents(report)
    paths = [path for subcategories in categories.values() for paths in subcategories.values() for path in paths]
    results = [next((p for p in paths if p.endswith(end)), None) for end in (".html", ".png")]
    return list(categories), [path for path in results if path]


def take(report: Path, out: Path, categories: list[str], results: list[str]) -> list[Path]:
    chromium = browser()
    if chromium is None:
        raise RuntimeError("no Chromium found (apt-get install chromium)")
    out.mkdir(parents=True, exist_ok=True)
    shots = []
    for name, script in views(categories, results).items():
        png = out / f"{name}.png"
        screenshot(report, script, png, chromium)
        shots.append(png)
    return shots


if __name__ == "__main__":
    report, out = Path(sys.argv[1]), Path(sys.argv[2])
    for png in take(report, out, *shown(report)):
        print(png)
