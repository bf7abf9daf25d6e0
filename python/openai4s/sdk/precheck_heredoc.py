"""Here-documents for the static precheck, as here-strings.

The precheck's lexer knows ``<<<`` but not ``<<``: it would read a here-
document's body as commands (so data like ``never rm -rf /`` in a ``cat``
body was refused, and a ``bash`` body holding ``$CMD`` passed). Before
lexing, each here-document is rewritten in place as the here-string of its
body: ``bash <<EOF\\n$CMD\\nEOF`` becomes ``bash <<< "$CMD"``. An unquoted
delimiter expands the body, so it becomes a double-quoted word (its
``$``, ``$(...)`` and backquotes stay visible); a quoted one (``<<'EOF'``)
does not, so it becomes a single-quoted word. ``<<-`` strips leading tabs.

The host's C++ check (``src/host/precheck.cpp``) does the same rewrite,
step for step; the shared corpus holds them together. One forward pass:
linear in the text. A body whose delimiter line never comes leaves the
text as it was (its lines are then read as commands, the closed side).
"""

_WORD_ENDS = " \t\n;&|<>()"


def inline_heredocs(text):
    """`text` with each here-document replaced by a here-string."""
    if "<<" not in text:
        return text
    out, pending = [], []
    i, n, word_start = 0, len(text), True
    while i < n:
        char = text[i]
        if char == "\n" and pending:
            out.append(char)
            i = _read_bodies(text, i + 1, pending, out)
            if i < 0:
                return text
            pending, word_start = [], True
            continue
        if text.startswith("<<<", i):
            out.append("<<<")
            i += 3
        elif text.startswith("<<", i):
            i = _read_delimiter(text, i + 2, pending, out)
        elif char == "#" and word_start:
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
        else:
            end = _skip_quoted(text, i)
            out.append(text[i:end])
            word_start = char in _WORD_ENDS
            i = end
    return "".join(out) if not pending else text


def _skip_quoted(text, i):
    """End of the quoted span, escape or arithmetic at i (i + 1 for a plain
    character): the shell sees no ``<<`` inside them."""
    n, char = len(text), text[i]
    if char == "\\":
        return min(i + 2, n)
    if char == "'":
        end = text.find("'", i + 1)
        return n if end < 0 else end + 1
    if char == '"':
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return min(j + 1, n)
    if text.startswith("((", i):  # $((1<<2)), ((x <<= 1)): arithmetic
        end = text.find("))", i + 2)
        return n if end < 0 else end + 2
    return i + 1


def _read_delimiter(text, i, pending, out):
    """After ``<<`` at i: records the here-document and leaves a slot in
    `out` for its here-string. Returns the index after the delimiter."""
    n = len(text)
    strip_tabs = i < n and text[i] == "-"
    i += 1 if strip_tabs else 0
    while i < n and text[i] in " \t":
        i += 1
    delimiter, quoted = [], False
    while i < n and text[i] not in _WORD_ENDS:
        end = _skip_quoted(text, i)
        if text[i] in "'\"\\":
            quoted = True
            part = text[i + 1 : end] if text[i] == "\\" else text[i + 1 : end - 1]
        else:
            part = text[i:end]
        delimiter.append(part)
        i = end
    if not delimiter:
        out.append("<<")  # no word: not a here-document the shell accepts
        return i
    pending.append((len(out), "".join(delimiter), quoted, strip_tabs))
    out.append(None)
    return i


def _read_bodies(text, i, pending, out):
    """Reads the bodies of the pending here-documents from i on, in order,
    and fills their slots. Returns the index after the last delimiter line,
    or -1 when one never comes."""
    n = len(text)
    for slot, delimiter, quoted, strip_tabs in pending:
        lines = []
        while True:
            if i >= n:
                return -1
            end = text.find("\n", i)
            end = n if end < 0 else end
            line = text[i:end]
            i = end + 1
            if strip_tabs:
                line = line.lstrip("\t")
            if line == delimiter:
                break
            lines.append(line)
        out[slot] = "<<< " + _as_word("\n".join(lines), quoted)
    return min(i, n)


def _as_word(body, quoted):
    if quoted:
        return "'" + body.replace("'", "'\\''") + "'"
    return '"' + body.replace("\\", "\\\\").replace('"', '\\"') + '"'
