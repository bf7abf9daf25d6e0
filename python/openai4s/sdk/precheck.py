"""Static shell-safety precheck for ``host.bash``, run before any RPC.

A small shell-word analyser, not a regex over the raw text: it tokenises
(quotes, escapes, operators, redirections), splits the command list on
``;``, ``&&``, ``||``, ``|`` and ``&``, strips launch prefixes (``sudo``,
``env``, ``nice`` ...) and assignments, and looks at what each simple
command would actually run. So ``echo "rm -rf /"`` is an argument to echo and
passes, while ``sudo -u root rm -fr -- /*`` is a recursive delete of ``/``.
``bash -c``/``sh -c`` scripts, ``eval`` and ``$(...)`` bodies are analysed the
same way.

It is total: anything it cannot analyse is "no reason", because the host
repeats the check. Time is linear in the command length.
"""

import re

RM_ROOT = "recursive delete targeting '/', '~', or $HOME"
MKFS = "mkfs would format a filesystem"
DD_DEVICE = "dd writing directly to a device"
RAW_DEVICE = "overwrite of a raw block device"
CHMOD_ROOT = "chmod 777 on '/'"
FORK_BOMB = "shell fork bomb"
CURL_PIPE_SHELL = "piping a downloaded script directly into a shell"

_MAX_DEPTH = 4
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "(", ")", "\n"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<", "<<", "<<<", "<>", "<&"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_OPERATORS = sorted(_SEPARATORS | _REDIRECTS, key=len, reverse=True)
_OPERATOR_STARTS = frozenset(op[0] for op in _OPERATORS)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "csh", "tcsh", "fish", "ash"})
_DOWNLOADERS = frozenset({"curl", "wget"})
_HOME_SPELLINGS = ("~", "$HOME", "${HOME}")
_PERMISSIVE_MODES = frozenset({"777", "0777", "a+rwx", "+rwx", "ugo+rwx", "a=rwx", "ugo=rwx"})
_HARMLESS_DEVICES = frozenset(
    {"null", "zero", "full", "random", "urandom", "stdout", "stderr", "tty"}
)
_RAW_BLOCK_DEVICE = re.compile(
    r"/dev/(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*"
    r"|nvme\d+n\d+(p\d+)?|mmcblk\d+(p\d+)?|disk\d+(s\d+)?)"
)
_FORK_BOMB = re.compile(r"([\w:.]+)\(\)\{\1\|\1&\};\1")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
# Launch prefixes: name -> options that take a separate argument.
_PREFIXES = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "-r", "-t"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "exec": frozenset({"-a"}),
    "time": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
}


class _Lexed:
    """Tokens ``(kind, text)`` plus what the analysis needs besides them."""

    def __init__(self) -> None:
        self.tokens = []  # ("word", text) | ("op", text)
        self.skeleton = []  # the text outside quotes, for the fork bomb
        self.nested = []  # bodies of $(...) and `...` to analyse recursively


def _read_substitution(text, i, opening, closing):
    """Index after the balanced ``closing`` that matches an opening at i."""
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
                return i
            continue
        i += 1
    return i


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
        elif char == '"':
            i = _lex_double_quoted(text, i + 1, word, lexed)
            in_word = True
            lexed.skeleton.append('""')
        elif char == "\\":
            word.append(text[i + 1 : i + 2])
            in_word = True
            i += 2
        elif text.startswith("$(", i) or char == "`":
            end = (
                _read_substitution(text, i + 1, "(", ")")
                if char == "$"
                else text.find("`", i + 1) + 1 or n
            )
            body = text[i + 2 : end - 1] if char == "$" else text[i + 1 : end - 1]
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


def _lex_double_quoted(text, i, word, lexed):
    n = len(text)
    while i < n and text[i] != '"':
        char = text[i]
        if char == "\\" and i + 1 < n and text[i + 1] in '"\\$`':
            word.append(text[i + 1])
            i += 2
        elif text.startswith("$(", i):
            end = _read_substitution(text, i + 1, "(", ")")
            lexed.nested.append(text[i + 2 : end - 1])
            word.append(text[i:end])
            i = end
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
    """Simple commands as (words, write-redirect targets, op that follows)."""
    commands, words, targets = [], [], []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        if kind == "op" and text in _REDIRECTS:
            if i + 1 < len(tokens) and tokens[i + 1][0] == "word":
                if text in _WRITE_REDIRECTS:
                    targets.append(tokens[i + 1][1])
                i += 2
                continue
        elif kind == "op":
            commands.append((words, targets, text))
            words, targets = [], []
        else:
            words.append(text)
        i += 1
    commands.append((words, targets, None))
    return [command for command in commands if command[0] or command[1]]


def _basename(word):
    return word.rsplit("/", 1)[-1]


def _strip_prefixes(words):
    """The words of what actually runs, without assignments and launchers."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.match(word):
            i += 1
            continue
        name = _basename(word)
        if name not in _PREFIXES:
            break
        with_argument = _PREFIXES[name]
        i += 1
        if name == "timeout":
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in with_argument else 1
            i += 1  # the duration
            continue
        while i < len(words) and (words[i].startswith("-") or _ASSIGNMENT.match(words[i])):
            if words[i] == "--":
                i += 1
                break
            i += 2 if words[i] in with_argument else 1
    return words[i:]


def _root_like(target):
    if target.startswith("/"):
        return target.strip("/*.") == ""
    for home in _HOME_SPELLINGS:
        if target == home or target.startswith(home + "/"):
            return target[len(home) :].strip("/*.") == ""
    return False


def _rm_reason(args):
    recursive, targets, options_done = False, [], False
    for arg in args:
        if options_done or not arg.startswith("-") or arg == "-":
            targets.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            recursive = recursive or arg == "--recursive"
        elif "r" in arg or "R" in arg:
            recursive = True
    if recursive and any(_root_like(target) for target in targets):
        return RM_ROOT
    return None


def _dd_reason(args):
    for arg in args:
        if arg.startswith("of=/dev/"):
            device = arg[len("of=/dev/") :]
            if device not in _HARMLESS_DEVICES and not device.startswith("fd/"):
                return DD_DEVICE
    return None


def _chmod_reason(args):
    if any(arg in _PERMISSIVE_MODES for arg in args):
        if any(_root_like(arg) and not arg.startswith(("~", "$")) for arg in args):
            return CHMOD_ROOT
    return None


def _nested_scripts(words):
    """Scripts a command hands to another shell: ``sh -c S``, ``eval S``."""
    if not words:
        return []
    name = _basename(words[0])
    if name == "eval":
        return [" ".join(words[1:])]
    if name in _SHELLS:
        for index, word in enumerate(words[1:], start=1):
            if word.startswith("-") and not word.startswith("--") and "c" in word:
                return words[index + 1 : index + 2]
    return []


def _command_reason(words, targets):
    for target in targets:
        if _RAW_BLOCK_DEVICE.fullmatch(target):
            return RAW_DEVICE
    if not words:
        return None
    name, args = _basename(words[0]), words[1:]
    if name == "rm":
        return _rm_reason(args)
    if name.lower().startswith("mkfs"):
        return MKFS
    if name == "dd":
        return _dd_reason(args)
    if name == "chmod":
        return _chmod_reason(args)
    return None


def _pipes_download_into_shell(commands):
    for (words, _targets, op), (following, _t, _o) in zip(commands, commands[1:]):
        if op in ("|", "|&") and words and following:
            if _basename(words[0]) in _DOWNLOADERS and _basename(following[0]) in _SHELLS:
                return True
    return False


def _classify(command, depth):
    lexed = _lex(command)
    commands = [
        (_strip_prefixes(words), targets, op) for words, targets, op in _commands(lexed.tokens)
    ]
    for words, targets, _op in commands:
        reason = _command_reason(words, targets)
        if reason:
            return reason
    skeleton = "".join(lexed.skeleton)
    if _FORK_BOMB.search("".join(skeleton.split())):
        return FORK_BOMB
    if _pipes_download_into_shell(commands):
        return CURL_PIPE_SHELL
    if depth < _MAX_DEPTH:
        scripts = list(lexed.nested)
        for words, _targets, _op in commands:
            scripts.extend(_nested_scripts(words))
        for script in scripts:
            reason = _classify(script, depth + 1)
            if reason:
                return reason
    return None


def precheck(command):
    """The reason ``command`` is refused, or None."""
    if not isinstance(command, str) or not command.strip():
        return None
    try:
        return _classify(command, 0)
    except Exception:
        return None
