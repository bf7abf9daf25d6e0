// The static precheck (§6.5) as a word analyser rather than a regex over the
// raw text: each simple command is reduced to what actually runs (launch
// prefixes like sudo/env/timeout and assignments stripped), so quoting,
// prefixes and option spelling do not evade it, and a quoted argument to
// echo stays data. $(...), `...`, `sh -c S`, `eval S` and `env -S S` bodies
// run too, so they are analysed the same way, at most kMaxDepth levels deep:
// every level is one linear pass and a character is copied into at most two
// scripts per level, so the total stays a constant multiple of the input.
//
// The table is evaluated as a whole and the first row (in the table's order)
// that matched anywhere is reported, so a command matching several rows
// always gets the same reason. The table is data (precheck_rules.json, which
// the worker's Python check reads too); nesting past its depth limit, deletes
// it cannot resolve and anything it fails to analyse are refused, and so are
// scripts it cannot read (eval or sh -c of an expansion, a pipe into a
// shell or xargs sh, a shell or source fed a process substitution, a shell's
// here-string or here-document holding an expansion, an alias definition,
// an expansion run as a command after IFS changed). Here-documents become
// here-strings before lexing, so a cat body is data, a bash body a script
// (sh <<< S is read like sh -c S) and a python3 - body a program.
//
// A guard against accidents, not a security boundary: the sandbox is.
#include "host/precheck.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/ascii.h"
#include "host/precheck_heredoc.h"
#include "host/precheck_rules.h"
#include "host/shell_lexer.h"

namespace o4s::host {

namespace {

// The table's rows as bits; kRowKeys names them as the rule table does.
enum Row : std::uint32_t {
  kRecursiveDelete = 1U << 0,
  kMkfs = 1U << 1,
  kDdDevice = 1U << 2,
  kRawDevice = 1U << 3,
  kChmodRoot = 1U << 4,
  kForkBomb = 1U << 5,
  kCurlPipeShell = 1U << 6,
  kUnresolvedDelete = 1U << 7,
  kTooDeep = 1U << 8,
  kUnanalysable = 1U << 9,
  kRsyncDelete = 1U << 10,
  kInterpreterDelete = 1U << 11,
  kUnresolvedScript = 1U << 12,
  kShellFromPipe = 1U << 13,
  kAliasDefinition = 1U << 14,
};

constexpr std::string_view kRowKeys[] = {
    "recursive_delete",  "mkfs",
    "dd_device",         "raw_device",
    "chmod_root",        "fork_bomb",
    "curl_pipe_shell",   "unresolved_delete",
    "too_deep",          "unanalysable",
    "rsync_delete",      "interpreter_delete",
    "unresolved_script", "shell_from_pipe",
    "alias_definition",
};

// Where the cd's of a command list leave a relative delete target.
enum class Cwd { kUnchanged, kRoot, kUnresolved };

const PrecheckRules& rules() { return precheck_rules(); }

using shell::basename_of;

bool is_word_char(char c) { return ascii::is_alnum(c) || c == '_'; }

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool only_chars(std::string_view text, std::string_view allowed) {
  return text.find_first_not_of(allowed) == std::string_view::npos;
}

template <typename Set>
bool contains(const Set& set, std::string_view item) {
  return set.find(item) != set.end();
}

bool is_shell(std::string_view name) { return contains(rules().shells, name); }

bool is_downloader(std::string_view name) { return contains(rules().downloaders, name); }

// "/", "/*", "//", "/." and friends: the root itself.
bool is_filesystem_root(std::string_view target) {
  return starts_with(target, "/") && only_chars(target, "/*.");
}

// A delete target that is /, ~, $HOME or ${HOME}, alone or followed by one
// of the separators the spec lists (whitespace, /, *, ;, &, |). After the
// lexer removed quotes, a quoted '/' is plain /. This is deliberately the
// spec's prefix rule, so "~/anything" is refused as well: the home
// directory is never a workspace and a typo there is unrecoverable.
bool is_root_or_home(std::string_view target) {
  if (is_filesystem_root(target)) return true;
  // ~user is a home too (and ~+, ~- are not resolved here): all refused.
  if (starts_with(target, rules().home_prefix)) return true;
  std::vector<std::string_view> roots = {"/"};
  for (const std::string& home : rules().home_spellings) roots.push_back(home);
  for (std::string_view root : roots) {
    if (!starts_with(target, root)) continue;
    if (target.size() == root.size()) return true;
    if (rules().root_separators.find(target[root.size()]) != std::string::npos) return true;
    if (root != "/" && only_chars(target.substr(root.size()), "/*.")) return true;
  }
  return false;
}

// An expansion, a substitution, a brace list or a '..' component: what the
// delete reaches is only known when the shell runs it.
bool is_unresolved(std::string_view target) {
  for (const std::string& marker : rules().unresolved_markers) {
    if (target.find(marker) != std::string_view::npos) return true;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = target.find('/', start);
    const std::string_view part = target.substr(start, slash - start);
    if (part == "..") return true;
    if (slash == std::string_view::npos) return false;
    start = slash + 1;
  }
}

std::uint32_t target_rows(std::string_view target, Cwd cwd) {
  if (is_root_or_home(target)) return kRecursiveDelete;
  if (is_unresolved(target)) return kUnresolvedDelete;
  if (!starts_with(target, "/") && !starts_with(target, "~")) {
    if (cwd == Cwd::kRoot && only_chars(target, "/*.")) return kRecursiveDelete;
    if (cwd != Cwd::kUnchanged) return kUnresolvedDelete;
  }
  return 0;
}

// GNU rm accepts unambiguous abbreviations of long options (--rec).
bool is_recursive_long_option(std::string_view option) {
  constexpr std::string_view kRecursive = "--recursive";
  return option.size() >= 3 && starts_with(kRecursive, option);
}

// GNU rm permutes arguments, so an option after the target still counts.
// `from_pipe`: more targets arrive on stdin (xargs), which nothing resolves.
std::uint32_t rm_rows(const std::vector<std::string>& args, Cwd cwd, bool from_pipe = false) {
  bool recursive = false;
  bool options_done = false;
  std::uint32_t rows = 0;
  for (const std::string& arg : args) {
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      rows |= target_rows(arg, cwd);
    } else if (arg == "--") {
      options_done = true;
    } else if (starts_with(arg, "--")) {
      recursive = recursive || is_recursive_long_option(arg);
    } else if (arg.find_first_of("rR") != std::string::npos) {
      recursive = true;
    }
  }
  if (!recursive) return 0;
  return from_pipe ? rows | kUnresolvedDelete : rows;
}

// find ROOTS... with -delete or -exec rm: a recursive delete of each root.
std::uint32_t find_rows(const std::vector<std::string>& args, Cwd cwd) {
  std::size_t i = 0;
  std::vector<std::string> roots;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (starts_with(arg, "-") || starts_with(arg, "(") || starts_with(arg, "!")) break;
    roots.push_back(arg);
  }
  bool deletes = false;
  for (std::size_t j = i; j < args.size(); ++j) {
    if (contains(rules().find_delete_actions, args[j])) deletes = true;
    if (contains(rules().find_exec_actions, args[j]) && j + 1 < args.size()) {
      const std::string_view name = basename_of(args[j + 1]);
      deletes = deletes || name == rules().rm || is_unresolved(name);
    }
  }
  if (!deletes) return 0;
  if (roots.empty()) roots.emplace_back(".");
  std::uint32_t rows = 0;
  for (const std::string& root : roots) rows |= target_rows(root, cwd);
  return rows;
}

// xargs [options] rm ...: rm whose targets come from a pipe.
std::uint32_t xargs_rows(const std::vector<std::string>& args, Cwd cwd) {
  std::size_t i = 0;
  while (i < args.size() && args[i].size() > 1 && args[i][0] == '-') {
    i += contains(rules().xargs_options_with_argument, args[i]) ? 2U : 1U;
  }
  if (i >= args.size()) return 0;
  const std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  const std::vector<std::string> run = shell::strip_launch_prefixes(rest);
  if (run.empty()) return 0;
  const std::string_view name = basename_of(run.front());
  // Its script (or the words of its -c script) come from the pipe.
  if (is_shell(name)) return kShellFromPipe;
  if (name != rules().rm && !is_unresolved(name)) return 0;
  return rm_rows(std::vector<std::string>(run.begin() + 1, run.end()), cwd, true);
}

// rsync --delete ... DEST deletes what DEST holds beyond the source; DEST
// is the last operand.
std::uint32_t rsync_rows(const std::vector<std::string>& args, Cwd cwd) {
  bool deletes = false;
  const std::string* destination = nullptr;
  for (const std::string& arg : args) {
    if (contains(rules().rsync_delete_options, arg) ||
        starts_with(arg, rules().rsync_delete_option_prefix)) {
      deletes = true;
    } else if (arg.size() < 2 || arg[0] != '-') {
      destination = &arg;
    }
  }
  if (!deletes || destination == nullptr) return 0;
  const std::uint32_t rows = target_rows(*destination, cwd);
  return (rows & kRecursiveDelete) != 0 ? std::uint32_t{kRsyncDelete} : rows;
}

// python3.11 is python; perl5 is perl.
bool is_interpreter(std::string_view name) {
  if (contains(rules().interpreters, name)) return true;
  const std::size_t end = name.find_last_not_of(rules().interpreter_version_chars);
  return end != std::string_view::npos && contains(rules().interpreters, name.substr(0, end + 1));
}

// python3 -c / perl -e ... (or a program on stdin: python3 - <<EOF) that
// names rmtree, unlink or remove and / or ~: each argument and stdin text
// is searched for a fixed set of short literals, so linear.
std::uint32_t interpreter_rows(const std::vector<std::string>& args) {
  bool deletes = false;
  bool rooted = false;
  for (const std::string& arg : args) {
    for (const std::string& word : rules().interpreter_delete_words) {
      deletes = deletes || arg.find(word) != std::string::npos;
    }
    for (const std::string& literal : rules().interpreter_root_literals) {
      rooted = rooted || arg.find(literal) != std::string::npos;
    }
  }
  return deletes && rooted ? std::uint32_t{kInterpreterDelete} : 0U;
}

Cwd cd_state(const std::vector<std::string>& args, Cwd cwd) {
  const std::string* target = nullptr;
  for (const std::string& arg : args) {
    if (arg.size() > 1 && arg[0] == '-') continue;
    target = &arg;
    break;
  }
  if (target == nullptr) return Cwd::kRoot;  // cd alone goes home
  if (is_root_or_home(*target)) return Cwd::kRoot;
  if (*target == "-" || is_unresolved(*target)) return Cwd::kUnresolved;
  if (starts_with(*target, "/")) return Cwd::kUnchanged;
  return cwd;  // a relative step from wherever we were
}

bool dd_matches(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (!starts_with(arg, "of=/dev/")) continue;
    const std::string_view device = std::string_view(arg).substr(8);
    // Pseudo devices are not storage: dd of=/dev/null is a benchmark idiom.
    const bool harmless = contains(rules().harmless_devices, device) || starts_with(device, "fd/");
    if (!harmless) return true;
  }
  return false;
}

bool chmod_matches(const std::vector<std::string>& args) {
  bool permissive = false;
  bool root = false;
  for (const std::string& arg : args) {
    permissive = permissive || contains(rules().permissive_modes, arg);
    root = root || is_filesystem_root(arg);
  }
  return permissive && root;
}

// Consumes `[chars]+` from `text` at `i`; false when there is none.
template <typename Pred>
bool eat_run(std::string_view text, std::size_t& i, Pred pred) {
  const std::size_t start = i;
  while (i < text.size() && pred(text[i])) ++i;
  return i > start;
}

// /dev/sdX, hdX, vdX, xvdX (optional partition digits), nvmeNnM[pP],
// mmcblkN[pP], diskN[sS]: raw block devices.
bool is_raw_block_device(std::string_view path) {
  if (!starts_with(path, "/dev/")) return false;
  std::string_view name = path.substr(5);
  std::size_t i = 0;
  auto digits = [&] { return eat_run(name, i, ascii::is_digit); };
  auto literal = [&](std::string_view word) {
    if (!starts_with(name.substr(i), word)) return false;
    i += word.size();
    return true;
  };
  bool matched = false;
  if (literal("sd") || literal("hd") || literal("vd") || literal("xvd")) {
    matched = eat_run(name, i, ascii::is_lower);
    digits();
  } else if (literal("nvme")) {
    matched = digits() && literal("n") && digits();
    if (matched && literal("p")) matched = digits();
  } else if (literal("mmcblk")) {
    matched = digits();
    if (matched && literal("p")) matched = digits();
  } else if (literal("disk")) {
    matched = digits();
    if (matched && literal("s")) matched = digits();
  }
  return matched && i == name.size();
}

std::uint32_t command_rows(const std::vector<std::string>& words,
                           const shell::SimpleCommand& command, Cwd cwd) {
  std::uint32_t rows = 0;
  for (const std::string& target : command.write_targets) {
    if (is_raw_block_device(target)) rows |= kRawDevice;
  }
  if (words.empty()) return rows;
  const std::string_view name = basename_of(words.front());
  const std::vector<std::string> args(words.begin() + 1, words.end());
  // A command name that is an expansion may well be rm.
  if (name == rules().rm || name.find_first_of("$`") != std::string_view::npos) {
    rows |= rm_rows(args, cwd);
  }
  if (name == "find") rows |= find_rows(args, cwd);
  if (name == "xargs") rows |= xargs_rows(args, cwd);
  if (name == "dd" && dd_matches(args)) rows |= kDdDevice;
  if (name == "chmod" && chmod_matches(args)) rows |= kChmodRoot;
  if (ascii::matches_lower_at(name, 0, "mkfs")) rows |= kMkfs;  // mkfs2, MKFS.ext4 as a command
  if (name == "rsync") rows |= rsync_rows(args, cwd);
  if (is_interpreter(name)) {
    std::vector<std::string> program = args;
    program.insert(program.end(), command.read_sources.begin(), command.read_sources.end());
    rows |= interpreter_rows(program);
  }
  return rows;
}

// The spec's row is "the word mkfs (case-insensitive)" anywhere in the text,
// quoted or not. That is deliberately broad: `grep mkfs notes.txt` is refused
// too. A word boundary is a non-[A-Za-z0-9_] byte, so mkfs.ext4 matches.
bool mentions_mkfs(std::string_view text) {
  for (std::size_t i = 0; i + 4 <= text.size(); ++i) {
    if (!ascii::matches_lower_at(text, i, "mkfs")) continue;
    const bool left = i == 0 || !is_word_char(text[i - 1]);
    const bool right = i + 4 == text.size() || !is_word_char(text[i + 4]);
    if (left && right) return true;
  }
  return false;
}

bool is_fork_bomb_name_char(char c) {
  return is_word_char(c) || c == ':' || c == '.' || static_cast<unsigned char>(c) >= 0x80;
}

// NAME(){NAME|NAME&};NAME on the whitespace-free skeleton. NAME is the run
// of name characters after "(){" (it must end at the "|"), so each "(){" is
// checked in time proportional to its own run, and the runs are disjoint:
// linear overall, where a backreference regex would not be.
bool has_fork_bomb(std::string_view skeleton) {
  std::string compact;
  compact.reserve(skeleton.size());
  for (char c : skeleton) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') compact.push_back(c);
  }
  const std::string_view text = compact;
  for (std::size_t at = text.find("(){"); at != std::string_view::npos;
       at = text.find("(){", at + 3)) {
    const std::size_t body = at + 3;
    std::size_t bar = body;
    while (bar < text.size() && is_fork_bomb_name_char(text[bar])) ++bar;
    if (bar == body || bar >= text.size() || text[bar] != '|') continue;
    const std::string_view name = text.substr(body, bar - body);
    if (at < name.size() || text.substr(at - name.size(), name.size()) != name) continue;
    const std::string tail = std::string(name) + "&};" + std::string(name);
    if (text.substr(bar + 1, tail.size()) == tail) return true;
  }
  return false;
}

// True when a substitution in `word` ($(...), `...`, <(...)) runs curl/wget.
bool substitutes_download(const std::string& word) {
  if (word.find_first_of("$`<") == std::string::npos) return false;
  for (const std::string& body : shell::lex(word).nested) {
    for (const shell::SimpleCommand& command : shell::simple_commands(shell::lex(body).tokens)) {
      const std::vector<std::string> run = shell::strip_launch_prefixes(command.words);
      if (!run.empty() && is_downloader(basename_of(run.front()))) return true;
    }
  }
  return false;
}

// A shell fed a download without a pipe: sh -c "$(curl ...)",
// bash <(curl ...), bash < <(curl ...), bash <<< "$(wget -O- ...)".
bool shell_runs_download(const shell::SimpleCommand& command, const std::vector<std::string>& run) {
  if (run.empty() || !is_shell(basename_of(run.front()))) return false;
  for (std::size_t i = 1; i < run.size(); ++i) {
    if (substitutes_download(run[i])) return true;
  }
  for (const std::string& source : command.read_sources) {
    if (substitutes_download(source)) return true;
  }
  return false;
}

// curl/wget anywhere earlier in a pipeline whose later stage is a shell, or
// a shell whose script or stdin is a download.
bool pipes_download_into_shell(const std::vector<shell::SimpleCommand>& commands,
                               const std::vector<std::vector<std::string>>& runs) {
  bool downloading = false;
  bool piped_in = false;
  for (std::size_t k = 0; k < commands.size(); ++k) {
    const std::string_view name = runs[k].empty() ? "" : basename_of(runs[k].front());
    if (piped_in && downloading && is_shell(name)) return true;
    if (shell_runs_download(commands[k], runs[k])) return true;
    if (!piped_in) downloading = false;
    downloading = downloading || is_downloader(name);
    const std::string& op = commands[k].next_operator;
    piped_in = op == "|" || op == "|&";
  }
  return false;
}

bool holds_expansion(std::string_view word) {
  return word.find_first_of(rules().expansion_chars) != std::string_view::npos;
}

// Index in `run` of the script a shell or su is given with -c; 0 for none.
std::size_t command_script_index(const std::vector<std::string>& run) {
  for (std::size_t i = 1; i + 1 < run.size(); ++i) {
    const std::string& word = run[i];
    const bool short_c =
        word.size() > 1 && word[0] == '-' && word[1] != '-' && word.find('c') != std::string::npos;
    if (short_c || word == "--command") return i + 1;
  }
  return 0;
}

bool is_process_substitution(std::string_view word) {
  for (const std::string& marker : rules().process_substitutions) {
    if (word.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

template <typename Pred>
bool any_of_words(const std::vector<std::string>& words, std::size_t from, Pred pred) {
  for (std::size_t i = from; i < words.size(); ++i) {
    if (pred(words[i])) return true;
  }
  return false;
}

// A shell without -c: its script is stdin (a pipe, a process substitution,
// a here-string) or an operand (a process substitution). A < file's name is
// read as a script too: harmless, a name alone deletes nothing.
std::uint32_t stdin_script_rows(const std::vector<std::string>& run,
                                const std::vector<std::string>& sources, bool piped_in) {
  if (piped_in || any_of_words(run, 1, is_process_substitution) ||
      any_of_words(sources, 0, is_process_substitution)) {
    return kShellFromPipe;
  }
  return any_of_words(sources, 0, holds_expansion) ? std::uint32_t{kUnresolvedScript} : 0U;
}

// Scripts the precheck cannot read: eval or sh -c of an expansion or a
// substitution (known only when it runs), an alias definition (it renames
// commands out of sight), a shell reading its script from a pipe, a process
// substitution, or a here-string / here-document holding an expansion.
std::uint32_t script_rows(const std::vector<std::string>& run,
                          const std::vector<std::string>& sources, bool piped_in) {
  if (run.empty()) return 0;
  const std::string_view name = basename_of(run.front());
  if (name == "eval") {
    for (std::size_t i = 1; i < run.size(); ++i) {
      if (holds_expansion(run[i])) return kUnresolvedScript;
    }
    return 0;
  }
  if (name == "alias") {
    for (std::size_t i = 1; i < run.size(); ++i) {
      if (run[i].find('=') != std::string::npos) return kAliasDefinition;
    }
    return 0;
  }
  if (contains(rules().script_sourcers, name)) {
    return any_of_words(run, 1, is_process_substitution) ? std::uint32_t{kShellFromPipe} : 0U;
  }
  if (!is_shell(name) && name != "su") return 0;
  if (const std::size_t script = command_script_index(run); script != 0) {
    return holds_expansion(run[script]) ? std::uint32_t{kUnresolvedScript} : 0U;
  }
  return is_shell(name) ? stdin_script_rows(run, sources, piped_in) : 0U;
}

bool assigns_ifs(const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    for (const std::string& assignment : rules().ifs_assignments) {
      if (starts_with(word, assignment)) return true;
    }
  }
  return false;
}

// Scripts a command hands to another interpreter: `sh -c S`, `su -c S`,
// `eval S...`, `env -S S`, `sh <<< S`, and an alias's value.
void collect_scripts(const std::vector<std::string>& words, const std::vector<std::string>& run,
                     const std::vector<std::string>& sources, std::vector<std::string>& scripts) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (basename_of(words[i]) != "env") continue;
    for (std::size_t j = i + 1; j < words.size() && starts_with(words[j], "-"); ++j) {
      const std::string& option = words[j];
      if ((option == "-S" || option == "--split-string") && j + 1 < words.size()) {
        scripts.push_back(words[j + 1]);
      } else if (starts_with(option, "--split-string=")) {
        scripts.push_back(option.substr(15));
      } else if (starts_with(option, "-S")) {
        scripts.push_back(option.substr(2));
      }
    }
  }
  if (run.empty()) return;
  const std::string_view name = basename_of(run.front());
  if (name == "eval") {
    std::string joined;
    for (std::size_t i = 1; i < run.size(); ++i) joined.append(i > 1 ? " " : "").append(run[i]);
    scripts.push_back(std::move(joined));
    return;
  }
  if (name == "alias") {
    for (std::size_t i = 1; i < run.size(); ++i) {
      const std::size_t equals = run[i].find('=');
      if (equals != std::string::npos) scripts.push_back(run[i].substr(equals + 1));
    }
    return;
  }
  if (!is_shell(name) && name != "su") return;
  if (const std::size_t script = command_script_index(run); script != 0) {
    scripts.push_back(run[script]);
  } else if (is_shell(name)) {
    scripts.insert(scripts.end(), sources.begin(), sources.end());
  }
}

std::uint32_t analyse(std::string_view text, int depth) {
  const shell::Lexed lexed = shell::lex(inline_heredocs(text));
  const std::vector<shell::SimpleCommand> commands = shell::simple_commands(lexed.tokens);
  std::vector<std::vector<std::string>> runs;
  runs.reserve(commands.size());
  std::uint32_t rows = 0;
  Cwd cwd = Cwd::kUnchanged;
  bool piped_in = false;
  bool ifs_changed = false;
  for (const shell::SimpleCommand& command : commands) {
    runs.push_back(shell::strip_launch_prefixes(command.words));
    const std::vector<std::string>& run = runs.back();
    rows |= command_rows(run, command, cwd);
    rows |= script_rows(run, command.read_sources, piped_in);
    // After IFS changes, an expansion run as a command splits into words
    // nobody can see here (IFS=,; c=rm,-rf,/; $c).
    ifs_changed = ifs_changed || assigns_ifs(command.words);
    if (ifs_changed && !run.empty() && holds_expansion(run.front())) rows |= kUnresolvedScript;
    piped_in = command.next_operator == "|" || command.next_operator == "|&";
    if (!run.empty() && contains(rules().directory_changers, basename_of(run.front()))) {
      cwd = cd_state(std::vector<std::string>(run.begin() + 1, run.end()), cwd);
    }
  }
  if (has_fork_bomb(lexed.skeleton)) rows |= kForkBomb;
  if (pipes_download_into_shell(commands, runs)) rows |= kCurlPipeShell;
  std::vector<std::string> scripts = lexed.nested;
  for (std::size_t k = 0; k < commands.size(); ++k) {
    collect_scripts(commands[k].words, runs[k], commands[k].read_sources, scripts);
  }
  // Past the limit nothing is known about what runs: refused, not skipped.
  if (!scripts.empty() && depth >= rules().max_depth) return rows | kTooDeep;
  for (const std::string& script : scripts) rows |= analyse(script, depth + 1);
  return rows;
}

bool is_blank(std::string_view text) { return only_chars(text, " \t\n\r\f\v"); }

std::optional<std::string> reason_of(std::uint32_t rows) {
  for (const std::string& key : rules().row_order) {
    for (std::size_t bit = 0; bit < std::size(kRowKeys); ++bit) {
      if (kRowKeys[bit] == key && (rows & (1U << bit)) != 0) return rules().reasons.at(key);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> static_precheck(std::string_view command) {
  if (is_blank(command)) return std::nullopt;
  try {
    std::uint32_t rows = analyse(command, 0);
    if (mentions_mkfs(command)) rows |= kMkfs;
    return reason_of(rows);
  } catch (...) {
    // Total by contract, and closed: what could not be analysed is refused.
    try {
      return reason_of(kUnanalysable);
    } catch (...) {
      return std::string("a command the precheck could not analyse");
    }
  }
}

}  // namespace o4s::host
