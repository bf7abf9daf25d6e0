"""`%vars`: the kernel's variable listing as a plain-text table."""

_VALUE_WIDTH = 60
_HEADERS = ("Name", "Type", "Size", "Value")


def _shorten(text, width):
    return text if len(text) <= width else text[: width - 1] + "…"


def _value(entry):
    """The preview as one line. Strings are quoted so that `'1'` and `1`
    differ; other previews are already display text or JSON scalars."""
    if "preview" not in entry:
        return ""
    preview = entry["preview"]
    if entry.get("kind") == "text" and isinstance(preview, str):
        return repr(preview)
    return str(preview).replace("\n", "\\n")


def _size(entry):
    """`3x4` for an array (its shape), else the length when there is one."""
    shape = entry.get("shape")
    if isinstance(shape, list) and shape:
        return "x".join(str(n) for n in shape)
    length = entry.get("length")
    return "" if length is None else str(length)


def _type(entry):
    """The type, with the element type of an array (`ndarray[float64]`)."""
    name = str(entry.get("type", "?"))
    dtype = entry.get("dtype")
    return f"{name}[{dtype}]" if isinstance(dtype, str) and dtype else name


def _row(entry):
    return (
        str(entry.get("name", "?")),
        _type(entry),
        _size(entry),
        _shorten(_value(entry), _VALUE_WIDTH),
    )


def format_variables(response):
    """Render an `inspect_variables` response; always ends with a newline."""
    entries = response.get("variables") or []
    if not entries:
        return "(no variables)\n"
    rows = [_HEADERS] + [_row(entry) for entry in entries]
    widths = [max(len(row[column]) for row in rows) for column in range(len(_HEADERS))]
    lines = []
    for row in rows:
        cells = [text.ljust(width) for text, width in zip(row, widths)]
        lines.append("  ".join(cells).rstrip())
    if response.get("truncated"):
        lines.append(f"(only the first {len(entries)} variables are shown)")
    return "\n".join(lines) + "\n"
