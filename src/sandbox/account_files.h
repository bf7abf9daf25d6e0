// The sandbox's own account database and host table: an /etc/passwd and /etc/group that
// name root, nobody and the kernel's user, nothing else. The host's files
// list the host's accounts (who runs what there) and do not know a uid
// leased for one kernel, so inside the sandbox `whoami`, getpass.getuser()
// and R's Sys.info()["user"] failed with "cannot find name for user ID".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::sandbox {

inline constexpr std::string_view kSandboxUserName = "openai4s";

std::string passwd_text(std::uint32_t uid, std::uint32_t gid, const std::string& home);
std::string group_text(std::uint32_t gid);
// The host's /etc/hosts names the host (its 127.0.1.1 line); the sandbox's
// names loopback and its own host name, so that name resolves inside.
std::string hosts_text(std::string_view host_name);
// A fresh random machine id (32 lower-case hex digits and a newline): the
// host's /etc/machine-id would name the host to every kernel on it.
std::string machine_id_text();
// A fresh random boot id (a UUID and a newline): the host's, under
// /proc/sys/kernel/random, is shared by every kernel of one boot, so two
// tenants could tell they run on one machine.
std::string boot_id_text();
// /proc/version as uname(2) already tells it (the release and version),
// without the host's build host and compiler.
std::string kernel_version_text();

// A sealed in-memory file holding `text`, positioned at its start, for
// bubblewrap to copy into a read-only file of the sandbox.
Result<UniqueFd> sealed_memory_file(const char* name, std::string_view text);

}  // namespace o4s::sandbox
