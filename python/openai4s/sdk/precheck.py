"""Static shell-safety precheck for ``host.bash``, run before any RPC.

A guard against accidents, not a security boundary (the sandbox is the
boundary). The rule table is ``precheck_rules.json`` next to this file: the
host's C++ check embeds the same file, and both run the shared corpus in
``tests/precheck/corpus.jsonl``, so the two cannot drift apart.

A small shell-word analyser, not a regex over the raw text: it tokenises
(quotes, escapes, operators, redirections), splits the command list on
``;``, ``&&``, ``||``, ``|`` and ``&``, strips launch prefixes (``sudo``,
``env``, ``nice`` ...) and assignments, and looks at what each simple
command would actually run. So ``echo "rm -rf /"`` is an argument to echo and
passes, while ``sudo -u root rm -fr -- /*`` is a recursive delete of ``/``.
``bash -c``/``sh -c`` scripts, ``eval``, ``env -S`` and ``$(...)`` bodies are
analysed the same way, up to a depth limit; nesting past it is refused.

It fails closed on deletes it cannot resolve statically: a target with an
expansion, a substitution, a brace list or ``..``, names from a pipe
(``xargs rm``), ``find -delete``/``-exec rm``, a command name that is itself
an expansion, and relative targets after a ``cd`` it cannot follow; and on
scripts it cannot read: ``eval`` or ``sh -c`` of an expansion or a
substitution, a pipe into a shell (``xargs sh`` too), a shell or ``source``
fed a process substitution (``source <(curl x)``), a shell's here-string or
here-document holding an expansion (``bash <<< "$CMD"``), an alias
definition, a command named by an expansion after an ``IFS`` assignment.
Here-documents become here-strings before lexing (precheck_heredoc.py), so a
``cat`` body is data and a ``bash`` body is a script. ``~user`` is a home
like ``~``; ``rsync --delete`` into ``/`` or ``~`` and ``python3 -c``/
``perl -e`` one-liners (or programs on stdin: ``python3 - <<EOF``) naming
``rmtree``/``unlink``/``remove`` with ``/`` or ``~`` are refused.
Time is linear in the command length.
"""

import json
import re
from pathlib import Path

from openai4s.sdk.precheck_heredoc import inline_heredocs

_RULES = json.loads((Path(__file__).with_name("precheck_rules.json")).read_text("utf-8"))
_REASONS = _RULES["reasons"]
_ROW_ORDER = _RULES["row_order"]

RM_ROOT = _REASONS["recursive_delete"]
UNRESOLVED_DELETE = _REASONS["unresolved_delete"]
MKFS = _REASONS["mkfs"]
DD_DEVICE = _REASONS["dd_device"]
RAW_DEVICE = _REASONS["raw_device"]
CHMOD_ROOT = _REASONS["chmod_root"]
FORK_BOMB = _REASONS["fork_bomb"]
CURL_PIPE_SHELL = _REASONS["curl_pipe_shell"]
RSYNC_DELETE = _REASONS["rsync_delete"]
INTERPRETER_DELETE = _REASONS["interpreter_delete"]
UNRESOLVED_SCRIPT = _REASONS["unresolved_script"]
SHELL_FROM_PIPE = _REASONS["shell_from_pipe"]
ALIAS_DEFINITION = _REASONS["alias_definition"]
TOO_DEEP = _REASONS["too_deep"]
UNANALYSABLE = _REASONS["unanalysable"]

_MAX_DEPTH = _RULES["max_depth"]
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "(", ")", "\n"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<", "<<", "<<<", "<>", "<&"})
_READ_REDIRECTS = frozenset({"<", "<<<"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_OPERATORS = sorted(_SEPARATORS | _REDIRECTS, key=len, reverse=True)
_OPERATOR_STARTS = frozenset(op[0] for op in _OPERATORS)
_SHELLS = frozenset(_RULES["shells"])
_DOWNLOADERS = frozenset(_RULES["downloaders"])
_HOME_SPELLINGS = tuple(_RULES["home_spellings"])
_HOME_PREFIX = _RULES["home_prefix"]
_RSYNC_DELETE_OPTIONS = frozenset(_RULES["rsync"]["delete_options"])
_RSYNC_DELETE_PREFIX = _RULES["rsync"]["delete_option_prefix"]
_ONE_LINERS = _RULES["one_liners"]
_INTERPRETERS = frozenset(_ONE_LINERS["interpreters"])
_DELETE_WORDS = tuple(_ONE_LINERS["delete_words"])
_ROOT_LITERALS = tuple(_ONE_LINERS["root_literals"])
_IFS_ASSIGNMENTS = tuple(_RULES["ifs_assignments"])
_EXPANSION_CHARS = _RULES["expansion_chars"]
_ROOT_SEPARATORS = _RULES["root_separators"]
_PERMISSIVE_MODES = frozenset(_RULES["permissive_modes"])
_HARMLESS_DEVICES = frozenset(_RULES["harmless_devices"])
_DELETE = _RULES["delete"]
_FIND_DELETE = frozenset(_DELETE["find_delete_actions"])
_FIND_EXEC = frozenset(_DELETE["find_exec_actions"])
_XARGS_WITH_ARGUMENT = frozenset(_DELETE["xargs_options_with_argument"])
_UNRESOLVED_MARKERS = tuple(_DELETE["unresolved_markers"])
_DIRECTORY_CHANGERS = frozenset(_DELETE["directory_changers"])
_PREFIXES = {name: frozenset(options) for name, options in _RULES["launch_prefixes"].items()}
_PREFIX_WITH_OPERAND = frozenset(_RULES["prefix_with_operand"])
_RESERVED_WORDS = frozenset(_RULES["reserved_words"])
_SCRIPT_SOURCERS = frozenset(_RULES["script_sourcers"])
_PROCESS_SUBSTITUTIONS = tuple(_RULES["process_substitutions"])
_RAW_BLOCK_DEVICE = re.compile(
    r"/dev/(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*"
    r"|nvme\d+n\d+(p\d+)?|mmcblk\d+(p\d+)?|disk\d+(s\d+)?)"
)
_MKFS_WORD = re.compile(r"(?<![A-Za-z0-9_])mkfs(?![A-Za-z0-9_])", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


class _Lexed:
    """Tokens ``(kind, text)`` plus what the analysis needs besides them."""

    def __init__(self) -> None:
        self.tokens = []  # ("word", text) | ("op", text)
        self.skeleton = []  # the text outside quotes, for the fork bomb
        self.nested = []  # bodies of $(...) and `...` to analyse recursively


def _read_substitution(text, i, opening, closing):
    """Index after the balanced ``closing`` that matches an opening at i,
    and where its body ends (the text's end when it never closes: the body
    is then all the rest, as on the host)."""
    depth = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if text.startswith(opening, i):
            depth += 1
            i += len(opening)
            continue
        if char == closing:
            depth -= 1
            i += 1
            if depth == 0:
                return i, i - 1
            continue
        i += 1
    return len(text), len(text)


def _lex(text):
    lexed = _Lexed()
    word, in_word = [], False
    i, n = 0, len(text)

    def finish():
        nonlocal word, in_word
        if in_word:
            lexed.tokens.append(("word", "".join(word)))
        word, in_word = [], False

    while i < n:
        char = text[i]
        if char in " \t\r":
            finish()
            lexed.skeleton.append(" ")
            i += 1
        elif char == "#" and not in_word:
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif char == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            word.append(text[i + 1 : end])
            in_word = True
            lexed.skeleton.append("''")
            i = end + 1
        elif text.startswith("$'", i):
            i = _lex_ansi_c_quoted(text, i + 2, word)
            in_word = True
            lexed.skeleton.append("''")
        elif char == '"' or text.startswith('$"', i):
            # $"..." is a translatable double-quoted string.
            i = _lex_double_quoted(text, i + (2 if char == "$" else 1), word, lexed)
            in_word = True
            lexed.skeleton.append('""')
        elif char == "\\":
            # Backslash-newline is a line continuation: it vanishes.
            word.append(text[i + 1 : i + 2].replace("\n", ""))
            in_word = True
            i += 2
        elif text.startswith(("$(", "<(", ">("), i) or char == "`":
            # Command and process substitution: the body runs.
            if char != "`":
                end, body_end = _read_substitution(text, i + 1, "(", ")")
                body = text[i + 2 : body_end]
            else:
                body_end = text.find("`", i + 1)
                body_end = n if body_end < 0 else body_end
                end = min(body_end + 1, n)
                body = text[i + 1 : body_end]
            lexed.nested.append(body)
            word.append(text[i:end])
            in_word = True
            lexed.skeleton.append("$()")
            i = end
        else:
            i = _lex_operator_or_char(text, i, word, lexed, finish)
            in_word = bool(word)
    finish()
    return lexed


_ANSI_C_ESCAPES = dict(zip("ntrabeEfv\\'\"?", "\n\t\r\a\b\x1b\x1b\f\v\\'\"?"))


def _ansi_c_digits(text, i, base, most):
    """(value, index after) of up to `most` digits in `base` at i; value
    None when there is none."""
    j = i
    while j < len(text) and j - i < most and _is_digit_in(text[j], base):
        j += 1
    return (int(text[i:j], base) if j > i else None), j


def _is_digit_in(char, base):
    return char in "0123456789abcdefABCDEF" and int(char, 16) < base


def _lex_ansi_c_quoted(text, i, word):
    """$'...' from i (after the quote): its escapes decoded as bash does, so
    $'\x72m' is rm. Returns the index after the closing quote."""
    n = len(text)
    while i < n and text[i] != "'":
        if text[i] != "\\" or i + 1 >= n:
            word.append(text[i])
            i += 1
            continue
        escape, i = text[i + 1], i + 2
        value = None
        if escape in _ANSI_C_ESCAPES:
            value = ord(_ANSI_C_ESCAPES[escape])
        elif escape == "x":
            value, i = _ansi_c_digits(text, i, 16, 2)
        elif escape in "01234567":
            value, i = _ansi_c_digits(text, i - 1, 8, 3)
        word.append("\\" + escape if value is None else chr(value & 0xFF))
    return i + 1


def _lex_double_quoted(text, i, word, lexed):
    n = len(text)
    while i < n and text[i] != '"':
        char = text[i]
        if char == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
            # An escaped quote, backslash, $ or `; backslash-newline vanishes.
            word.append(text[i + 1].replace("\n", ""))
            i += 2
        elif text.startswith("$(", i):
            end, body_end = _read_substitution(text, i + 1, "(", ")")
            lexed.nested.append(text[i + 2 : body_end])
            word.append(text[i:end])
            i = end
        elif char == "`":  # `...` runs inside double quotes too
            body_end = text.find("`", i + 1)
            body_end = n if body_end < 0 else body_end
            lexed.nested.append(text[i + 1 : body_end])
            word.append(text[i : body_end + 1])
            i = min(body_end + 1, n)
        else:
            word.append(char)
            i += 1
    return i + 1


def _lex_operator_or_char(text, i, word, lexed, finish):
    # An fd number directly before a redirection belongs to the operator.
    if text[i].isdigit() and not word:
        j = i
        while j < len(text) and text[j].isdigit():
            j += 1
        if j < len(text) and text[j] in "<>":
            i = j
    for op in _OPERATORS if text[i] in _OPERATOR_STARTS else ():
        if text.startswith(op, i):
            finish()
            lexed.tokens.append(("op", ";" if op == "\n" else op))
            lexed.skeleton.append(op)
            return i + len(op)
    word.append(text[i])
    lexed.skeleton.append(text[i])
    return i + 1


def _commands(tokens):
    """Simple commands as (words, write-redirect targets, read sources (what
    < and <<< feed stdin), op that follows)."""
    commands, words, targets, sources = [], [], [], []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        if kind == "op" and text in _REDIRECTS:
            if i + 1 < len(tokens) and tokens[i + 1][0] == "word":
                if text in _WRITE_REDIRECTS:
                    targets.append(tokens[i + 1][1])
                elif text in _READ_REDIRECTS:
                    sources.append(tokens[i + 1][1])
                i += 2
                continue
        elif kind == "op":
            commands.append((words, targets, sources, text))
            words, targets, sources = [], [], []
        else:
            words.append(text)
        i += 1
    commands.append((words, targets, sources, None))
    return [command for command in commands if command[0] or command[1] or command[2]]


def _basename(word):
    return word.rsplit("/", 1)[-1]


def _strip_prefixes(words):
    """The words of what actually runs, without assignments, reserved words
    and launchers."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.match(word) or word in _RESERVED_WORDS:
            i += 1
            continue
        name = _basename(word)
        if name not in _PREFIXES:
            break
        with_argument = _PREFIXES[name]
        i += 1
        while i < len(words) and (
            (len(words[i]) > 1 and words[i].startswith("-")) or _ASSIGNMENT.match(words[i])
        ):
            if words[i] == "--":
                i += 1
                break
            i += 2 if words[i] in with_argument else 1
        if name in _PREFIX_WITH_OPERAND:
            i += 1  # the duration
    return words[i:]


def _root_like(target):
    """/, ~, $HOME or ${HOME}, alone or followed by a separator (so
    "~/anything" too: the home directory is never a workspace), and any
    "~user" home."""
    if target.startswith("/") and target.strip("/*.") == "":
        return True
    if target.startswith(_HOME_PREFIX):
        return True
    for root in ("/",) + _HOME_SPELLINGS:
        if not target.startswith(root):
            continue
        if len(target) == len(root) or target[len(root)] in _ROOT_SEPARATORS:
            return True
        if root != "/" and target[len(root) :].strip("/*.") == "":
            return True
    return False


def _unresolved(target):
    return any(marker in target for marker in _UNRESOLVED_MARKERS) or ".." in target.split("/")


def _target_row(target, cwd):
    """recursive_delete, unresolved_delete or None for one delete target;
    `cwd` is "root", "unresolved" or None after the command list's cd's."""
    if _root_like(target):
        return "recursive_delete"
    if _unresolved(target):
        return "unresolved_delete"
    if not target.startswith(("/", "~")):
        if cwd == "root" and target.strip("/*.") == "":
            return "recursive_delete"
        if cwd is not None:
            return "unresolved_delete"
    return None


def _is_recursive_option(arg):
    if arg.startswith("--"):
        return len(arg) >= 3 and "--recursive".startswith(arg)
    return "r" in arg or "R" in arg


def _rm_rows(args, cwd, from_pipe=False):
    recursive, targets, options_done = False, [], False
    for arg in args:
        if options_done or len(arg) < 2 or not arg.startswith("-"):
            targets.append(arg)
        elif arg == "--":
            options_done = True
        else:
            recursive = recursive or _is_recursive_option(arg)
    if not recursive:
        return set()
    rows = {_target_row(target, cwd) for target in targets} - {None}
    if from_pipe:
        rows.add("unresolved_delete")
    return rows


def _find_rows(args, cwd):
    roots, i = [], 0
    while i < len(args) and not args[i].startswith(("-", "(", "!")):
        roots.append(args[i])
        i += 1
    deletes = False
    for j in range(i, len(args)):
        if args[j] in _FIND_DELETE:
            deletes = True
        elif args[j] in _FIND_EXEC and j + 1 < len(args):
            name = _basename(args[j + 1])
            deletes = deletes or name == _DELETE["rm"] or _unresolved(name)
    if not deletes:
        return set()
    return {_target_row(root, cwd) for root in roots or ["."]} - {None}


def _xargs_rows(args, cwd):
    i = 0
    while i < len(args) and len(args[i]) > 1 and args[i].startswith("-"):
        i += 2 if args[i] in _XARGS_WITH_ARGUMENT else 1
    run = _strip_prefixes(args[i:])
    if not run:
        return set()
    name = _basename(run[0])
    if name in _SHELLS:
        # Its script (or the words of its -c script) come from the pipe.
        return {"shell_from_pipe"}
    if name == _DELETE["rm"] or _unresolved(name):
        return _rm_rows(run[1:], cwd, from_pipe=True)
    return set()


def _rsync_rows(args, cwd):
    """rsync --delete ... DEST deletes what DEST holds beyond the source;
    DEST is the last operand."""
    deletes, destination = False, None
    for arg in args:
        if arg in _RSYNC_DELETE_OPTIONS or arg.startswith(_RSYNC_DELETE_PREFIX):
            deletes = True
        elif not (len(arg) > 1 and arg.startswith("-")):
            destination = arg
    if not deletes or destination is None:
        return set()
    row = _target_row(destination, cwd)
    return {"rsync_delete" if row == "recursive_delete" else row} - {None}


def _is_interpreter(name):
    return name.rstrip(_ONE_LINERS["version_chars"]) in _INTERPRETERS or name in _INTERPRETERS


def _interpreter_rows(args):
    """python3 -c / perl -e ... (or a program on stdin: python3 - <<EOF)
    naming rmtree, unlink or remove and / or ~."""
    deletes = any(word in arg for arg in args for word in _DELETE_WORDS)
    rooted = any(literal in arg for arg in args for literal in _ROOT_LITERALS)
    return {"interpreter_delete"} if deletes and rooted else set()


def _holds_expansion(word):
    return any(char in word for char in _EXPANSION_CHARS)


def _command_script_index(run):
    """Index in `run` of the script a shell or su is given with -c, or None."""
    for index in range(1, len(run) - 1):
        word = run[index]
        short_c = len(word) > 1 and word[0] == "-" and word[1] != "-" and "c" in word
        if short_c or word == "--command":
            return index + 1
    return None


def _is_process_substitution(word):
    return any(marker in word for marker in _PROCESS_SUBSTITUTIONS)


def _script_rows(run, sources, piped_in):
    """Scripts the precheck cannot read: eval or sh -c of an expansion, an
    alias definition, a shell reading its script from a pipe, a process
    substitution, or a here-string / here-document holding an expansion."""
    if not run:
        return set()
    name, args = _basename(run[0]), run[1:]
    if name == "eval":
        return {"unresolved_script"} if any(map(_holds_expansion, args)) else set()
    if name == "alias":
        return {"alias_definition"} if any("=" in arg for arg in args) else set()
    if name in _SCRIPT_SOURCERS:
        return {"shell_from_pipe"} if any(map(_is_process_substitution, args)) else set()
    if name not in _SHELLS and name != "su":
        return set()
    index = _command_script_index(run)
    if index is not None:
        return {"unresolved_script"} if _holds_expansion(run[index]) else set()
    if name not in _SHELLS:
        return set()
    if piped_in or any(map(_is_process_substitution, args + sources)):
        return {"shell_from_pipe"}
    # Without -c a shell's stdin is its script (a < file's name is read as
    # one too: harmless, a name alone deletes nothing).
    return {"unresolved_script"} if any(map(_holds_expansion, sources)) else set()


def _cd_state(args, cwd):
    """Where a cd leaves the command list, as far as deletes are concerned."""
    operands = [arg for arg in args if not (len(arg) > 1 and arg.startswith("-"))]
    if not operands:
        return "root"  # cd alone goes home
    target = operands[0]
    if _root_like(target):
        return "root"
    if target == "-" or _unresolved(target):
        return "unresolved"
    if target.startswith("/"):
        return None
    return cwd  # a relative step from wherever we were


def _dd_rows(args):
    for arg in args:
        if arg.startswith("of=/dev/"):
            device = arg[len("of=/dev/") :]
            if device not in _HARMLESS_DEVICES and not device.startswith("fd/"):
                return {"dd_device"}
    return set()


def _chmod_rows(args):
    if any(arg in _PERMISSIVE_MODES for arg in args):
        if any(arg.startswith("/") and arg.strip("/*.") == "" for arg in args):
            return {"chmod_root"}
    return set()


def _nested_scripts(words, run, sources):
    """Scripts a command hands to another interpreter: ``sh -c S``,
    ``su -c S``, ``eval S``, ``env -S S``, ``sh <<< S``."""
    scripts = []
    for i, word in enumerate(words):
        if _basename(word) != "env":
            continue
        j = i + 1
        while j < len(words) and words[j].startswith("-"):
            option = words[j]
            if option in ("-S", "--split-string") and j + 1 < len(words):
                scripts.append(words[j + 1])
            elif option.startswith("--split-string="):
                scripts.append(option[len("--split-string=") :])
            elif option.startswith("-S") and not option.startswith("--"):
                scripts.append(option[2:])
            j += 1
    if not run:
        return scripts
    name = _basename(run[0])
    if name == "eval":
        scripts.append(" ".join(run[1:]))
    elif name == "alias":
        # An alias's value runs whenever its name does.
        scripts.extend(arg.split("=", 1)[1] for arg in run[1:] if "=" in arg)
    elif name in _SHELLS or name == "su":
        index = _command_script_index(run)
        if index is not None:
            scripts.append(run[index])
        elif name in _SHELLS:
            scripts.extend(sources)
    return scripts


def _command_rows(run, targets, sources, cwd):
    rows = set()
    for target in targets:
        if _RAW_BLOCK_DEVICE.fullmatch(target):
            rows.add("raw_device")
    if not run:
        return rows
    name, args = _basename(run[0]), run[1:]
    if name == _DELETE["rm"] or ("$" in name or "`" in name):
        # A command name that is an expansion may well be rm.
        rows |= _rm_rows(args, cwd)
    if name == "find":
        rows |= _find_rows(args, cwd)
    if name == "xargs":
        rows |= _xargs_rows(args, cwd)
    if name.lower().startswith("mkfs"):
        rows.add("mkfs")
    if name == "dd":
        rows |= _dd_rows(args)
    if name == "chmod":
        rows |= _chmod_rows(args)
    if name == "rsync":
        rows |= _rsync_rows(args, cwd)
    if _is_interpreter(name):
        rows |= _interpreter_rows(args + sources)
    return rows


def _substitutes_download(word):
    if not any(c in word for c in "$`<"):
        return False
    for body in _lex(word).nested:
        for words, _targets, _sources, _op in _commands(_lex(body).tokens):
            run = _strip_prefixes(words)
            if run and _basename(run[0]) in _DOWNLOADERS:
                return True
    return False


def _is_name_char(char):
    # re's \w for a str pattern (isalnum covers its letters and digits), ':' and '.'.
    return char.isalnum() or char in "_:."


def _has_fork_bomb(text):
    r"""Whether `text` (blanks removed) holds ``NAME(){NAME|NAME&};NAME``:
    the regex ``([\w:.]+)\(\)\{\1\|\1&\};\1`` searched in linear time.
    A backtracking search of it is quadratic in a long word (a 50,000-
    character argument took 17 s); here the name is fixed by what follows
    ``(){``, since it must end where ``|`` begins."""
    start = text.find("(){")
    while start != -1:
        body = start + 3
        end = body
        while end < len(text) and _is_name_char(text[end]):
            end += 1
        name = text[body:end]
        if (
            name
            and text.endswith(name, 0, start)
            and text.startswith("|" + name + "&};" + name, end)
        ):
            return True
        start = text.find("(){", start + 1)
    return False


def _pipes_download_into_shell(commands):
    downloading = piped_in = False
    for run, _targets, sources, op in commands:
        name = _basename(run[0]) if run else ""
        if piped_in and downloading and name in _SHELLS:
            return True
        if name in _SHELLS and any(_substitutes_download(arg) for arg in run[1:] + sources):
            return True
        if not piped_in:
            downloading = False
        downloading = downloading or name in _DOWNLOADERS
        piped_in = op in ("|", "|&")
    return False


def _classify(command, depth):
    """The rows `command` matches, anywhere in it."""
    lexed = _lex(inline_heredocs(command))
    raw = _commands(lexed.tokens)
    rows, cwd, runs = set(), None, []
    piped_in = ifs_changed = False
    for words, targets, sources, op in raw:
        run = _strip_prefixes(words)
        runs.append((run, targets, sources, op))
        rows |= _command_rows(run, targets, sources, cwd)
        rows |= _script_rows(run, sources, piped_in)
        # After IFS changes, an expansion run as a command splits into
        # words nobody can see here (IFS=,; c=rm,-rf,/; $c).
        ifs_changed = ifs_changed or any(w.startswith(_IFS_ASSIGNMENTS) for w in words)
        if ifs_changed and run and _holds_expansion(run[0]):
            rows.add("unresolved_script")
        piped_in = op in ("|", "|&")
        if run and _basename(run[0]) in _DIRECTORY_CHANGERS:
            cwd = _cd_state(run[1:], cwd)
    skeleton = "".join(lexed.skeleton)
    if _has_fork_bomb("".join(skeleton.split())):
        rows.add("fork_bomb")
    if _pipes_download_into_shell(runs):
        rows.add("curl_pipe_shell")
    scripts = list(lexed.nested)
    for (words, _targets, sources, _op), (run, *_rest) in zip(raw, runs):
        scripts.extend(_nested_scripts(words, run, sources))
    if scripts and depth >= _MAX_DEPTH:
        rows.add("too_deep")
    elif scripts:
        for script in scripts:
            rows |= _classify(script, depth + 1)
    return rows


def precheck(command):
    """The reason ``command`` is refused, or None."""
    if not isinstance(command, str) or not command.strip():
        return None
    try:
        rows = _classify(command, 0)
    except Exception:  # fail closed: what cannot be analysed is not run
        return UNANALYSABLE
    if _MKFS_WORD.search(command):
        rows.add("mkfs")
    for row in _ROW_ORDER:
        if row in rows:
            return _REASONS[row]
    return None
