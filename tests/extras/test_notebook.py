"""The example notebook runs (nbclient) and its HTML renders cleanly (headless Chromium): the report
fragments style only themselves, the rest of the page looks the same as without them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import EXAMPLES, require_module, require_program

NOTEBOOK = EXAMPLES / "api.ipynb"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def executed() -> Any:
    nbformat = require_module("nbformat", "notebook")
    nbclient = require_module("nbclient", "notebook")
    require_module("ipykernel", "notebook")
    require_module("numpy", "weights")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()
    return nb


def _outputs(nb: Any, mime: str) -> list[str]:
    return [o["data"][mime] for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs
            if o.get("output_type") in ("execute_result", "display_data") and mime in o.get("data", {})]


def test_notebook_runs_and_shows_results(executed: Any) -> None:
    errors = [o for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs
              if o.get("output_type") == "error"]
    assert errors == []
    plain = "\n".join(_outputs(executed, "text/plain"))
    assert "'relu': ('conditional', 'Thm. 8')" in plain and "'tanh': ('impossible', 'L-growth')" in plain
    assert "('absorbable', (0, 1))" in plain
    html = _outputs(executed, "text/html")
    assert len(html) >= 3  # a classification, the facts, the report
    for fragment in html:
        assert fragment.startswith('<div class="symabsorb">') and "<!DOCTYPE" not in fragment
    assert any('<table class="summary">' in h and "<math" in h for h in html)  # the report: its summary table


PROBE = """<script>
(function () {
  var props = ["font-family", "font-size", "line-height", "color", "max-width", "margin-left", "margin-top",
               "padding-left", "border-bottom-style", "background-color", "stroke-linejoin"];
  var rows = [];
  document.querySelectorAll("body, body *").forEach(function (el) {
    if (el.closest(".symabsorb") || el.tagName === "SCRIPT" || el.tagName === "STYLE") return;
    var s = getComputedStyle(el);
    rows.push(el.tagName + ":" + props.map(function (p) { return s.getPropertyValue(p); }).join("|"));
  });
  var verdicts = Array.prototype.map.call(document.querySelectorAll(".symabsorb .verdict"),
    function (el) { return getComputedStyle(el).backgroundColor; });
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({outside: rows, verdicts: verdicts,
                                    fragments: document.querySelectorAll(".symabsorb").length});
  document.body.appendChild(out);
})();
</script>"""


def _probe(chromium: str, html: str, tmp: Path, name: str) -> dict[str, Any]:
    page = tmp / f"{name}.html"
    page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    run = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--no-first-run", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={tmp / ('profile-' + name)}", "--virtual-time-budget=5000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=300)
    m = re.search(r'<pre id="probe">(.*?)</pre>', run.stdout, flags=re.S)
    assert m, run.stderr[-2000:]
    text = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    result: dict[str, Any] = json.loads(text)
    return result


def test_notebook_html_renders_cleanly_in_chromium(executed: Any, tmp_path: Path) -> None:
    chromium = require_program("chromium", "chromium")
    nbconvert = require_module("nbconvert", "notebook")
    exporter = nbconvert.HTMLExporter(template_name="lab")  # JupyterLab's own stylesheet
    body, _ = exporter.from_notebook_node(executed)
    assert body.count('<div class="symabsorb">') >= 3
    # the same page without symabsorb's <style> elements: what the rest of the notebook looks like untouched
    control = re.sub(r'(<div class="symabsorb">)<style>.*?</style>', r"\1", body, flags=re.S)
    control = re.sub(r"<style[^>]*>[^<]*\.plot-act\d+[^<]*</style>", "", control)
    with_css, without_css = _probe(chromium, body, tmp_path, "page"), _probe(chromium, control, tmp_path, "control")
    assert with_css["fragments"] >= 3
    assert with_css["outside"] == without_css["outside"]  # no rule leaks out of a fragment
    assert with_css["verdicts"] and all(c not in ("rgba(0, 0, 0, 0)", "transparent") for c in with_css["verdicts"])
    assert without_css["verdicts"] and all(c == "rgba(0, 0, 0, 0)" for c in without_css["verdicts"])
