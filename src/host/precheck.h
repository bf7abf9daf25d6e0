// Static shell safety precheck (spec host.md §6.5) and the shell-path secret
// rules (§6.6). Total: never throws; a checker that cannot decide reports no
// match (the worker runs the same table before any host call; the host's
// run is authoritative).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace o4s::host {

// The user-visible reason when a command matches a catastrophic pattern.
std::optional<std::string> static_precheck(std::string_view command);

// True when the command names a secret file (.env, *.pem, id_rsa, ...).
bool references_secret_file(std::string_view command);
// True when a path's basename is a secret file name (case-insensitive).
bool is_secret_basename(std::string_view basename);

// Redacts bearer tokens, known token prefixes and NAME=value secrets, then
// cuts to `limit` characters.
std::string redact_secrets(std::string_view text, std::size_t limit);

// Unique hosts of http(s):// URLs in order of appearance.
std::vector<std::string> extract_domains(std::string_view command);
// network | package_install | filesystem_write | filesystem_read | process
std::string command_category(std::string_view command, const std::vector<std::string>& domains);

// Splits shell words (quotes and backslashes honoured; operators ; | & < >
// split words). Unbalanced quotes: a whitespace split.
std::vector<std::string> shell_words(std::string_view command);

}  // namespace o4s::host
