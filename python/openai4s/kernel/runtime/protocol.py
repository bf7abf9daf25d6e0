"""Wire limits and frame encoding shared by the Python worker runtime.

Only the worker imports this module; the host reads the same numbers from the
C++ core. Keep it import-light: it is on the worker's start-up path.
"""

from openai4s.kernel.runtime import wire_json

#: Bound on each text field the worker reports (stdout, stderr, error).
MAX_OUTPUT_CHARS = 1_000_000
#: Worst JSON expansion of one character: a control char becomes ``\\u00XX``.
#: Non-BMP characters are 4 raw bytes because non-ASCII is never escaped.
JSON_WORST_BYTES_PER_CHAR = 6
#: stdout, stderr and error.
MAX_RESPONSE_TEXT_FIELDS = 3
#: Ceiling of one outbound line, newline included. The host's reader uses the
#: same bound, so a frame over it would be refused rather than read.
MAX_FRAME_BYTES = (
    JSON_WORST_BYTES_PER_CHAR * MAX_RESPONSE_TEXT_FIELDS * MAX_OUTPUT_CHARS + 2_000_000
)
#: Largest ``stdout_chunk`` text.
CHUNK_CHARS = 64_000
#: Largest ``host_call`` request (UTF-8, newline excluded); the host rejects
#: bigger frames, so the worker refuses them before writing anything.
HOST_CALL_WIRE_CAP = 15_000_000
#: Deepest array/object nesting a frame may have (src/proto/limits.h): the
#: host refuses a deeper one unread, so a host call is refused here first.
MAX_FRAME_DEPTH = 256
#: Garbage or out-of-order frames tolerated while waiting for one RPC answer.
DISCARD_BUDGET = 8
TRUNCATION_MARKER = f"\n...(truncated at {MAX_OUTPUT_CHARS} characters)"


#: One frame's JSON text: raw non-ASCII, no NaN/Infinity (not JSON).
dumps = wire_json.encode
#: A str as a JSON string literal, non-ASCII raw.
json_string = wire_json.encode_string

# Bytes that JSON needs escaped, other than the three handled in bulk below:
# a translate() through this table turns each into 0 and everything else
# into 1, and a 0 in the result sends the text to the general encoder.
_BULK_ESCAPES = ((b"\\", b"\\\\"), (b'"', b'\\"'), (b"\n", b"\\n"))
_NEEDS_GENERAL = bytes(0 if (byte < 0x20 and byte != 0x0A) else 1 for byte in range(256))


def json_string_bytes(text: str) -> bytes:
    """``json_string(text)`` as UTF-8 bytes, the same bytes, about 3x faster
    for the usual output (any text whose only specials are newlines,
    quotes and backslashes).

    JSON escapes only ASCII bytes, and UTF-8 never uses an ASCII byte inside
    a multi-byte character, so the escaping can run on the encoded bytes
    with C-speed bytes methods instead of character by character.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate: the general path, then "replace" as on the wire.
        return json_string(text).encode("utf-8", "replace")
    if 0 in data.translate(_NEEDS_GENERAL):
        return json_string(text).encode("utf-8")
    for special, escaped in _BULK_ESCAPES:
        if special in data:
            data = data.replace(special, escaped)
    return b'"' + data + b'"'


# Lone surrogates (e.g. from surrogateescape-decoded bytes) are not encodable
# as UTF-8: the worker's protocol stream writes them as "?" (errors=
# "replace"), which keeps a frame whole where a strict encoder would drop it.


def _oversized_replacement(obj) -> dict:
    kind = obj.get("type") if isinstance(obj, dict) else None
    note = f"kernel dropped an oversized {str(kind)!r} frame (>{MAX_FRAME_BYTES} bytes)"
    if kind == "response" and obj.get("id"):
        return {
            "type": "response",
            "id": obj["id"],
            "stdout": "",
            "stderr": "",
            "error": note,
            "interrupted": bool(obj.get("interrupted", False)),
        }
    return {"type": "log", "msg": note}


def encode_frame(obj) -> str:
    """The newline-terminated line for ``obj``, never over MAX_FRAME_BYTES.

    An oversized frame is replaced, never truncated: a cut JSON line would
    desynchronise the host's single reader, while a replacement still answers
    the request it belonged to.
    """
    line = dumps(obj) + "\n"
    # Four bytes per code point is the UTF-8 maximum, so short lines skip the
    # encode that measuring them exactly would cost.
    if len(line) * 4 > MAX_FRAME_BYTES and len(line.encode("utf-8")) > MAX_FRAME_BYTES:
        line = dumps(_oversized_replacement(obj)) + "\n"
    return line


#: Filename prefix of compiled Cell source (``<kernel:N>``); frames whose code
#: carries it are the researcher's, whichever Cell defined them.
CELL_TAG_PREFIX = "<kernel:"


def cell_tag(seq: int) -> str:
    return f"{CELL_TAG_PREFIX}{seq}>"
