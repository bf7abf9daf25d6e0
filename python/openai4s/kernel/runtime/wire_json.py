"""The worker's JSON codec, on the C accelerator ``_json`` directly.

The ``json`` package compiles regular expressions when it is imported, and
``re`` brings ``enum`` with it: together about a fifth of a sandboxed
worker's start, for two helpers the worker only ever uses with C-speed
settings. This module drives the same C scanner and encoder that
``json.loads`` and ``json.dumps`` use, so the results are the same, and it
imports ``json`` itself only to report input that is not JSON (with
``json.JSONDecodeError``, as ``json.loads`` does), an error path. A Cell that imports ``json`` pays for it
then, as in any Python.
"""

import _json

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _DecoderSettings:
    """What the C scanner reads from its context: ``json.loads``' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


_scan_once = _json.make_scanner(_DecoderSettings())


def _decode_error(message, text, position):
    from json import JSONDecodeError

    return JSONDecodeError(message, text, position)


def decode(text):
    """``json.loads(text)`` for a str, bytes or bytearray document."""
    if not isinstance(text, str):
        if not isinstance(text, (bytes, bytearray)):
            kind = text.__class__.__name__
            raise TypeError(f"the JSON object must be str, bytes or bytearray, not {kind}")
        from json import detect_encoding

        text = bytes(text).decode(detect_encoding(text), "surrogatepass")
    elif text.startswith("\ufeff"):
        raise _decode_error("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return scan(_scan_once, text)


def scan(scan_once, text):
    """The one value a str holds, read by ``scan_once`` (a C scanner from
    ``_json.make_scanner``); JSONDecodeError (a ValueError) otherwise."""
    start = 0
    # Only text that begins with whitespace is stripped: a copy of a large
    # frame to find no whitespace would cost more than the scan.
    if text and text[0] in _WHITESPACE:
        start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = scan_once(text, start)
    except StopIteration as missing:
        raise _decode_error("Expecting value", text, missing.value) from None
    except SystemError:
        # The scanner builds its error from json.decoder, which it looks up
        # in sys.modules without importing it: until json is imported, bad
        # input comes out as "returned NULL without setting an exception".
        # With json.decoder there, the same scan raises the real error.
        import json.decoder  # noqa: F401

        value, end = scan_once(text, start)
    if end != len(text):
        rest = text[end:]
        stripped = rest.lstrip(_WHITESPACE)
        if stripped:
            raise _decode_error("Extra data", text, end + len(rest) - len(stripped))
    return value


def _refuse(value):
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


#: A str as a JSON string literal, non-ASCII raw.
encode_string = _json.encode_basestring


def encode(
    value,
    *,
    ensure_ascii=False,
    separators=(",", ":"),
    allow_nan=False,
    sort_keys=False,
    default=_refuse,
):
    """``json.dumps(value, ...)`` with the worker's defaults: raw non-ASCII,
    compact separators, no NaN or Infinity (they are not JSON)."""
    to_literal = _json.encode_basestring_ascii if ensure_ascii else encode_string
    if isinstance(value, str):
        return to_literal(value)
    item_separator, key_separator = separators
    # A new encoder (and cycle-marker dict) per call, as json.dumps makes:
    # an encoder that raised part-way keeps the markers of what it was in.
    encoder = _json.make_encoder(
        {}, default, to_literal, None, key_separator, item_separator, sort_keys, False, allow_nan
    )
    return "".join(encoder(value, 0))
