"""What the terminal REPL does with a cell's rich displays.

A terminal cannot show an image, so a PNG or SVG display is written under
the workspace's `.openai4s/figures/` and its path is printed; other bundles
print their `text/plain` form (every display carries one).
"""

import base64
import binascii
import itertools
import os

FIGURES_DIR = os.path.join(".openai4s", "figures")

#: MIME type -> file extension, for the types written to files (in order of
#: preference when a bundle has several).
_IMAGE_TYPES = (("image/png", "png"), ("image/svg+xml", "svg"), ("image/jpeg", "jpg"))


class DisplayWriter:
    def __init__(self, workspace, console):
        self.directory = os.path.join(workspace, FIGURES_DIR)
        self.console = console
        self._numbers = itertools.count(1)

    def __call__(self, bundle):
        """An execute(on_display=...) callback."""
        if not isinstance(bundle, dict) or bundle.get("type") == "clear_output":
            return
        data = bundle.get("data")
        if not isinstance(data, dict):
            return
        for mime, extension in _IMAGE_TYPES:
            if isinstance(data.get(mime), str):
                path = self._write(mime, extension, data[mime])
                if path is not None:
                    self.console.info(f"[figure: {path}]\n")
                    return
        text = data.get("text/plain")
        if isinstance(text, str) and text:
            self.console.info(text if text.endswith("\n") else text + "\n")

    def _write(self, mime, extension, payload):
        try:
            content = payload.encode() if mime == "image/svg+xml" else base64.b64decode(payload)
        except (binascii.Error, ValueError):
            self.console.message(f"(a {mime} display could not be decoded)\n")
            return None
        try:
            os.makedirs(self.directory, exist_ok=True)
            while True:
                path = os.path.join(self.directory, f"figure-{next(self._numbers)}.{extension}")
                try:
                    # "x": never overwrite a figure of an earlier session.
                    with open(path, "xb") as handle:
                        handle.write(content)
                    return path
                except FileExistsError:
                    continue
        except OSError as exc:
            self.console.message(f"(could not save a {mime} display: {exc})\n")
            return None
