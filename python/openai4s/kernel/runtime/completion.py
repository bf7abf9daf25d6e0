"""Worker-side ``complete`` and ``inspect`` requests (tab completion, ``obj?``).

Neither ever runs code of the Cell's objects. Names and dotted chains
rooted in the namespace are resolved by ``safe_lookup`` (static reads only).
Everything else -- import statements, literals, names the code under the
cursor defines itself -- goes to jedi (Debian's python3-jedi) in interpreter
mode over an *empty* namespace, so jedi never holds a live user object
either. Without jedi, completion is rlcompleter-style over the same static
views, and imports complete from module names found on ``sys.path``.
"""

import builtins
import keyword
import re
import types

from openai4s.kernel.runtime import safe_lookup

MAX_MATCHES = 500
MAX_CODE_CHARS = 1_000_000
MAX_DOC_CHARS = 20_000
_HIDDEN = ("__openai4s", "_o4s_", "_OpenAI4S")
_DOTTED = re.compile(r"((?:[^\W\d]\w*)(?:\s*\.\s*[^\W\d]\w*)*)\s*\.\s*(\w*)$")
_NAME = re.compile(r"(?<![\w.])([^\W\d]\w*)?$")
_IMPORT = re.compile(r"^\s*(?:from\s+[\w.]*(?:\s+import\s+[\w, ]*)?|import\s+[\w., ]*)$")
_builtins_dict = types.ModuleType.__dict__["__dict__"].__get__(builtins)


def _jedi():
    try:
        import jedi
    except Exception:
        return None
    try:
        # Descriptors (properties, __getattr__) are never evaluated, even on
        # library objects jedi introspects; the namespace we give is empty.
        jedi.settings.allow_unsafe_interpreter_executions = False
    except Exception:
        pass
    return jedi


def _clamp(code, cursor):
    if type(code) is not str:
        raise ValueError("code must be a string")
    if len(code) > MAX_CODE_CHARS:
        raise ValueError("code is too long to complete")
    if type(cursor) is not int or cursor < 0 or cursor > len(code):
        cursor = len(code)
    return cursor


def _filter(candidates, prefix):
    hide_private = not prefix.startswith("_")
    hide_dunder = not prefix.startswith("__")
    out = []
    for name in candidates:
        if not name.startswith(prefix) or name.startswith(_HIDDEN):
            continue
        if hide_dunder and name.startswith("__"):
            continue
        if hide_private and name.startswith("_") and not name.startswith("__"):
            continue
        out.append(name)
    out.sort(key=lambda name: (name.startswith("_"), name.lower(), name))
    return out


def _namespace_names(namespace):
    names = {key for key in dict.keys(namespace) if type(key) is str}
    names.update(key for key in dict.keys(_builtins_dict) if type(key) is str)
    names.update(keyword.kwlist)
    return names


def _line_before(code, cursor):
    start = code.rfind("\n", 0, cursor) + 1
    return code[start:cursor]


def _jedi_position(code, cursor):
    before = code[:cursor]
    line = before.count("\n") + 1
    column = cursor - (before.rfind("\n") + 1)
    return line, column


def _jedi_complete(code, cursor):
    jedi = _jedi()
    if jedi is None:
        return None
    line, column = _jedi_position(code, cursor)
    try:
        found = jedi.Interpreter(code, [{}]).complete(line, column)
    except Exception:
        return None
    matches = []
    for completion in found[:MAX_MATCHES]:
        name = completion.name
        if type(name) is str:
            matches.append(name)
    return matches


def _module_names(prefix):
    """Top-level module names on sys.path (no import), rlcompleter-style."""
    import pkgutil
    import sys

    names = set(sys.builtin_module_names)
    try:
        names.update(module.name for module in pkgutil.iter_modules())
    except Exception:
        pass
    return sorted(name for name in names if name.startswith(prefix))


def complete(namespace, code, cursor):
    """The body of a ``complete_reply``."""
    cursor = _clamp(code, cursor)
    before = code[:cursor]
    line = _line_before(code, cursor)
    # Identifier characters right after the cursor are replaced too.
    end = cursor
    while end < len(code) and (code[end].isalnum() or code[end] == "_"):
        end += 1
    if _IMPORT.match(line):
        word = re.search(r"[\w.]*$", line).group(0)
        matches = _jedi_complete(code, cursor)
        if matches is None:
            matches = _module_names(word) if "." not in word else []
            prefix = word
        else:
            prefix = re.search(r"\w*$", line).group(0)
        return _reply(matches, cursor - len(prefix), end)
    dotted = _DOTTED.search(before)
    if dotted is not None:
        chain = re.sub(r"\s+", "", dotted.group(1))
        prefix = dotted.group(2)
        try:
            target = safe_lookup.resolve(namespace, chain)
        except (AttributeError, safe_lookup.Unsafe):
            target = None
        else:
            return _reply(_filter(safe_lookup.names(target), prefix), cursor - len(prefix), end)
        if chain.split(".")[0] in namespace:
            return _reply([], cursor - len(prefix), end)  # a live root we cannot see into
        matches = _jedi_complete(code, cursor) or []
        return _reply(matches, cursor - len(prefix), end)
    name = _NAME.search(before)
    prefix = name.group(1) or "" if name is not None else ""
    if name is None or not prefix:
        matches = _jedi_complete(code, cursor) or []
        return _reply(matches, cursor - _trailing_word(before), end)
    matches = set(_filter(_namespace_names(namespace), prefix))
    # Names the code itself defines (a function being written, a loop var).
    matches.update(m for m in (_jedi_complete(code, cursor) or []) if m.startswith(prefix))
    ordered = sorted(matches, key=lambda n: (n.startswith("_"), n.lower(), n))
    return _reply(ordered, cursor - len(prefix), end)


def _trailing_word(text):
    return len(re.search(r"\w*$", text).group(0))


def _reply(matches, start, end):
    unique = list(dict.fromkeys(matches))[:MAX_MATCHES]
    return {"matches": unique, "cursor_start": start, "cursor_end": end}


# -- inspect ---------------------------------------------------------------

_EXPR_AT = re.compile(r"[^\W\d]\w*(?:\s*\.\s*[^\W\d]\w*)*")


def _name_at(code, cursor):
    """The dotted name under (or just before) the cursor; else the callee of
    the innermost open call, as ``obj?`` and Shift-Tab help do."""
    for match in _EXPR_AT.finditer(code):
        if match.start() <= cursor <= match.end():
            return re.sub(r"\s+", "", match.group(0)[: cursor - match.start()] or match.group(0))
        if match.start() > cursor:
            break
    depth = 0
    for index in range(cursor - 1, -1, -1):
        char = code[index]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                callee = re.search(r"([^\W\d]\w*(?:\.[^\W\d]\w*)*)\s*$", code[:index])
                return callee.group(1) if callee else None
            depth -= 1
    return None


def _full_name_at(code, cursor):
    """The whole dotted name containing the cursor (not cut at it)."""
    for match in _EXPR_AT.finditer(code):
        if match.start() <= cursor <= match.end():
            return re.sub(r"\s+", "", match.group(0))
    return _name_at(code, cursor)


def _doc_of(obj):
    """A docstring read without hooks: only exact str values count."""
    cls = type(obj)
    if safe_lookup.is_class(obj):
        doc = safe_lookup.class_dict(obj).get("__doc__")
    elif cls is types.FunctionType:
        doc = types.FunctionType.__dict__["__doc__"].__get__(obj)
    elif cls is types.ModuleType:
        doc = dict.get(safe_lookup.instance_dict(obj) or {}, "__doc__")
    elif _is_c_object(obj):
        try:
            doc = obj.__doc__
        except Exception:
            doc = None
    else:
        doc = None
    if type(doc) is not str:
        return None
    import inspect

    return inspect.cleandoc(doc)[:MAX_DOC_CHARS]


def _is_c_object(obj):
    """Every class in the object's MRO is a static (C) type: attribute reads
    then run no Python code of the user's."""
    for klass in safe_lookup.mro(type(obj)):
        if safe_lookup.is_heap_type(klass):
            return False
    return True


def _safe_preview(value):
    from openai4s.kernel.runtime import inspector

    if value is None:
        return "None"
    entry = inspector.describe("value", value)
    preview = entry.get("preview")
    if preview is None:
        return None
    if type(preview) is str:
        return preview
    return repr(preview)


def _signature_of_function(func):
    code = types.FunctionType.__dict__["__code__"].__get__(func)
    defaults = types.FunctionType.__dict__["__defaults__"].__get__(func) or ()
    kwdefaults = types.FunctionType.__dict__["__kwdefaults__"].__get__(func) or {}
    names = code.co_varnames
    positional = code.co_argcount
    posonly = code.co_posonlyargcount
    kwonly = code.co_kwonlyargcount
    parts = []
    first_default = positional - len(defaults)
    for index in range(positional):
        text = names[index]
        if index >= first_default:
            text += "=" + _default_text(defaults[index - first_default])
        parts.append(text)
        if posonly and index == posonly - 1:
            parts.append("/")
    cursor = positional + kwonly
    flags = code.co_flags
    if flags & 0x04:  # CO_VARARGS
        parts.append("*" + names[cursor])
        cursor += 1
    elif kwonly:
        parts.append("*")
    for index in range(positional, positional + kwonly):
        text = names[index]
        if type(kwdefaults) is dict and text in kwdefaults:
            text += "=" + _default_text(dict.__getitem__(kwdefaults, text))
        parts.append(text)
    if flags & 0x08:  # CO_VARKEYWORDS
        parts.append("**" + names[cursor])
    return "(" + ", ".join(parts) + ")"


def _default_text(value):
    preview = _safe_preview(value)
    if preview is not None and type(value) is not str:
        return preview
    if type(value) is str:
        return repr(value[:60])
    return f"<{safe_lookup.type_name(type(value))}>"


def _source_of(func_or_class):
    import inspect
    import linecache

    if type(func_or_class) is types.FunctionType:
        code = types.FunctionType.__dict__["__code__"].__get__(func_or_class)
        lines = linecache.getlines(code.co_filename)
        if not lines:
            return None
        try:
            block = inspect.getblock(lines[code.co_firstlineno - 1 :])
        except Exception:
            return None
        return "".join(block)[:MAX_DOC_CHARS]
    return None


def describe(obj, name, detail_level):
    """The text/plain of ``obj?`` (``obj??`` at detail level 1)."""
    cls = type(obj)
    lines = []
    if safe_lookup.is_class(obj):
        lines.append(f"Type:      {safe_lookup.type_name(cls)}")
        lines.append(f"Class:     {safe_lookup.qualname(obj)}")
        init = safe_lookup.class_dict(obj).get("__init__")
        if type(init) is types.FunctionType:
            signature = _signature_of_function(init).replace("(self, ", "(", 1)
            lines.append(f"Init:      {name}{signature.replace('(self)', '()')}")
    elif cls is types.FunctionType:
        lines.append("Type:      function")
        lines.append(f"Signature: {name}{_signature_of_function(obj)}")
    elif cls is types.ModuleType:
        lines.append("Type:      module")
        own = safe_lookup.instance_dict(obj) or {}
        path = dict.get(own, "__file__")
        if type(path) is str:
            lines.append(f"File:      {path}")
    else:
        lines.append(f"Type:      {safe_lookup.qualname(cls)}")
        preview = _safe_preview(obj)
        if preview is not None:
            lines.append(f"Value:     {preview}")
        elif _is_c_object(obj) and callable(obj):
            try:
                text_signature = obj.__text_signature__
            except Exception:
                text_signature = None
            if type(text_signature) is str:
                signature = text_signature.replace("($module, ", "(").replace("($self, ", "(")
                lines.append(f"Signature: {name}{signature.replace('($module)', '()')}")
        else:
            lines.append("String form: <not shown: its repr is the object's own code>")
        entry = _inspector_entry(obj)
        for key in ("length", "shape", "dtype"):
            if key in entry:
                lines.append(f"{key.capitalize() + ':':<10} {entry[key]}")
    doc = _doc_of(obj)
    if doc:
        lines.append("Docstring:")
        lines.append(doc)
    if detail_level >= 1:
        source = _source_of(obj)
        if source:
            lines.append("Source:")
            lines.append(source.rstrip("\n"))
    return "\n".join(lines)


def _inspector_entry(obj):
    from openai4s.kernel.runtime import inspector

    try:
        return inspector.describe("value", obj)
    except Exception:
        return {}


def inspect_code(namespace, code, cursor, detail_level=0):
    """The body of an ``inspect_reply``."""
    cursor = _clamp(code, cursor)
    detail_level = 1 if detail_level == 1 else 0
    name = _full_name_at(code, cursor)
    if name:
        try:
            obj = safe_lookup.resolve(namespace, name)
        except safe_lookup.Unsafe as unsafe:
            text = f"{name}: not inspected (reading it would run {unsafe.what})"
            return {"found": True, "data": {"text/plain": text}}
        except AttributeError:
            obj = safe_lookup._MISSING
        if obj is not safe_lookup._MISSING:
            return {"found": True, "data": {"text/plain": describe(obj, name, detail_level)}}
        if name.split(".")[0] in namespace:
            return {"found": False, "data": {}}
    text = _jedi_help(code, cursor)
    if text:
        return {"found": True, "data": {"text/plain": text}}
    return {"found": False, "data": {}}


def _jedi_help(code, cursor):
    jedi = _jedi()
    if jedi is None:
        return None
    line, column = _jedi_position(code, cursor)
    try:
        names = jedi.Interpreter(code, [{}]).help(line, column)
    except Exception:
        return None
    for found in names:
        try:
            doc = found.docstring()
        except Exception:
            continue
        if doc:
            return f"{found.full_name or found.name}\n{doc}"[:MAX_DOC_CHARS]
    return None
