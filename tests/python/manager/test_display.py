"""Rich display through real workers: display(), the _repr_*_ protocol on a
cell's last value, matplotlib figures, and hostile reprs."""

import base64

import pytest

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

RICH_CLASSES = (
    "class Rich:\n"
    "    def __init__(self, kind): self.kind = kind\n"
    "    def __repr__(self): return f'Rich({self.kind})'\n"
    "    def _repr_html_(self): return '<b>html</b>' if self.kind == 'html' else None\n"
    "    def _repr_markdown_(self): return '**md**' if self.kind == 'md' else None\n"
    "    def _repr_svg_(self): return '<svg/>' if self.kind == 'svg' else None\n"
    "    def _repr_png_(self): return b'\\x89PNG-bytes' if self.kind == 'png' else None\n"
    "    def _repr_latex_(self): return '$x^2$' if self.kind == 'latex' else None\n"
    "    def _repr_json_(self): return {'a': [1, 2]} if self.kind == 'json' else None\n"
    "class Bundle:\n"
    "    def __repr__(self): return 'Bundle()'\n"
    "    def _repr_mimebundle_(self, include=None, exclude=None):\n"
    "        return {'text/html': '<i>b</i>', 'application/vnd.custom+json': {'k': 1}}\n"
)


def _collecting():
    seen = []
    return seen, seen.append


def test_display_reaches_on_display_live_and_the_response(kernel):
    kernel.execute(RICH_CLASSES)
    seen, on_display = _collecting()
    result = kernel.execute("display(Rich('html'), 5)\nprint('after')", on_display=on_display)
    assert result["error"] is None, result
    assert result["stdout"] == "after\n"
    assert seen == result["displays"]
    assert seen[0] == {
        "data": {"text/html": "<b>html</b>", "text/plain": "Rich(html)"},
        "metadata": {},
        "display_id": None,
        "update": False,
    }
    assert seen[1]["data"] == {"text/plain": "5"}


def test_a_cell_that_displays_nothing_keeps_the_plain_response_keys(kernel):
    result = kernel.execute("print('x')")
    assert "displays" not in result
    assert "displays_truncated" not in result


@pytest.mark.parametrize(
    ("kind", "mime", "value"),
    [
        ("html", "text/html", "<b>html</b>"),
        ("md", "text/markdown", "**md**"),
        ("svg", "image/svg+xml", "<svg/>"),
        ("png", "image/png", base64.b64encode(b"\x89PNG-bytes").decode()),
        ("latex", "text/latex", "$x^2$"),
        ("json", "application/json", {"a": [1, 2]}),
    ],
)
def test_the_last_value_s_rich_repr_becomes_a_display(kernel, kind, mime, value):
    kernel.execute(RICH_CLASSES)
    result = kernel.execute(f"Rich({kind!r})")
    assert result["error"] is None, result
    # The text still reaches stdout, so a text-only reader misses nothing.
    assert result["stdout"] == f"Rich({kind})\n"
    [shown] = result["displays"]
    assert shown["data"] == {mime: value, "text/plain": f"Rich({kind})"}


def test_repr_mimebundle_is_used_and_plain_values_stay_text(kernel):
    kernel.execute(RICH_CLASSES)
    [shown] = kernel.execute("Bundle()")["displays"]
    assert shown["data"] == {
        "text/html": "<i>b</i>",
        "application/vnd.custom+json": {"k": 1},
        "text/plain": "Bundle()",
    }
    assert "displays" not in kernel.execute("[1, 2]")


def test_display_ids_updates_and_clear_output(kernel):
    seen, on_display = _collecting()
    result = kernel.execute(
        "from openai4s.kernel.display import clear_output, HTML\n"
        "handle = display(HTML('<p>1</p>'), display_id=True)\n"
        "handle.update(HTML('<p>2</p>'))\n"
        "clear_output(wait=True)",
        on_display=on_display,
    )
    assert result["error"] is None, result
    first, second, cleared = seen
    assert first["display_id"] and first["display_id"] == second["display_id"]
    assert (first["update"], second["update"]) == (False, True)
    assert second["data"]["text/html"] == "<p>2</p>"
    assert cleared == {"type": "clear_output", "wait": True}


HOSTILE = (
    "class Raising:\n"
    "    def __repr__(self): return 'Raising()'\n"
    "    def _repr_html_(self): raise ValueError('html broke')\n"
    "    def _repr_markdown_(self): return '*still here*'\n"
    "class WrongTypes:\n"
    "    def __repr__(self): return 'WrongTypes()'\n"
    "    def _repr_png_(self): return 12345\n"
    "    def _repr_html_(self): return ['not', 'a', 'str']\n"
    "    def _repr_json_(self): return {'nan': float('nan')}\n"
    "    def _repr_svg_(self): return '<svg/>'\n"
    "class Huge:\n"
    "    def __repr__(self): return 'H' * 5_000_000\n"
    "    def _repr_html_(self): return 'x' * 30_000_000\n"
    "    def _repr_markdown_(self): return 'ok'\n"
    "class BadBundle:\n"
    "    def __repr__(self): raise RuntimeError('no repr either')\n"
    "    def _repr_mimebundle_(self, **kw): return 'not a dict'\n"
    "class CatchAll:\n"
    "    def __getattr__(self, name): return lambda *a, **k: '<i>gotcha</i>'\n"
    "    def __repr__(self): return 'CatchAll()'\n"
)


def test_hostile_reprs_cost_only_their_format_never_the_worker(kernel):
    assert kernel.execute(HOSTILE)["error"] is None
    result = kernel.execute("display(Raising(), WrongTypes(), Huge(), BadBundle(), CatchAll())")
    assert result["error"] is None, result
    raising, wrong, huge, bad, catch_all = (d["data"] for d in result["displays"])
    assert raising == {"text/markdown": "*still here*", "text/plain": "Raising()"}
    assert wrong == {"image/svg+xml": "<svg/>", "text/plain": "WrongTypes()"}
    assert huge["text/markdown"] == "ok" and "text/html" not in huge
    assert len(huge["text/plain"]) <= 100_001  # a preview, not the payload
    assert bad == {"text/plain": "<BadBundle object; repr failed: RuntimeError>"}
    # A catch-all __getattr__ does not claim every format.
    assert catch_all == {"text/plain": "CatchAll()"}
    stderr = result["stderr"]
    assert "Raising._repr_html_ raised ValueError: html broke" in stderr
    assert "WrongTypes._repr_png_ for image/png returned int, expected bytes" in stderr
    assert "over the display limit" in stderr
    assert kernel.execute("print('alive')")["stdout"] == "alive\n"


def test_a_failing_repr_of_the_last_value_is_the_cell_s_error(kernel):
    kernel.execute(HOSTILE)
    result = kernel.execute("BadBundle()")
    assert "no repr either" in result["error"]
    assert kernel.execute("print('alive')")["stdout"] == "alive\n"


def test_an_on_display_that_raises_is_reported_after_the_cell(kernel):
    def explode(_bundle):
        raise ValueError("renderer broke")

    with pytest.raises(ValueError, match="renderer broke"):
        kernel.execute("display(1)\ndisplay(2)\nprint('done')", on_display=explode)
    assert kernel.execute("print('next')")["stdout"] == "next\n"


def _png_of(bundle):
    return base64.b64decode(bundle["data"]["image/png"])


def test_plt_show_and_the_end_of_a_drawing_cell_become_png_displays(kernel):
    result = kernel.execute(
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3])\n"
        "plt.show()\n"
        "plt.figure()\n"
        "plt.bar([1], [2])\n"
    )
    assert result["error"] is None, result
    shown, at_end = result["displays"]
    assert _png_of(shown).startswith(PNG_MAGIC) and _png_of(at_end).startswith(PNG_MAGIC)
    assert shown["data"]["text/plain"].startswith("<Figure size")
    assert "non-interactive" not in result["stderr"]
    # Figures are closed once shown: the next cell starts with none.
    after = kernel.execute("print(plt.get_fignums(), plt.get_backend())")
    assert after["stdout"] == "[] module://openai4s.kernel.mpl_inline\n"
    assert "displays" not in after


def test_a_failing_cell_still_shows_what_it_drew(kernel):
    result = kernel.execute("import matplotlib.pyplot as plt\nplt.plot([1])\n1 / 0")
    assert "ZeroDivisionError" in result["error"]
    [figure] = result["displays"]
    assert _png_of(figure).startswith(PNG_MAGIC)


def test_the_worker_and_its_children_plot_headless(kernel):
    result = kernel.execute(
        "import os, subprocess, sys\n"
        "print(os.environ['MPLBACKEND'])\n"
        "code = 'import matplotlib; print(matplotlib.get_backend())'\n"
        "print(subprocess.run([sys.executable, '-c', code], capture_output=True,"
        " text=True).stdout.strip())"
    )
    assert result["stdout"].split() == ["Agg", "agg"]


def test_a_cell_that_picks_its_own_backend_keeps_its_figures_open(kernel):
    kernel.execute("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt")
    result = kernel.execute("fig = plt.figure()")
    assert "displays" not in result
    assert result["guards"]["matplotlib"] == {"leaked": [1], "closed": []}
