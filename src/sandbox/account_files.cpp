#include "sandbox/account_files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/random_id.h"
#include "base/write_all.h"

namespace o4s::sandbox {

namespace {

constexpr std::uint32_t kNobodyId = 65534;
constexpr const char* kNoLogin = "/usr/sbin/nologin";

std::string passwd_line(std::string_view name, std::uint32_t uid, std::uint32_t gid,
                        const std::string& home, const char* shell) {
  return std::string(name) + ":x:" + std::to_string(uid) + ":" + std::to_string(gid) + ":" +
         std::string(name) + ":" + home + ":" + shell + "\n";
}

}  // namespace

std::string passwd_text(std::uint32_t uid, std::uint32_t gid, const std::string& home) {
  std::string text = passwd_line("root", 0, 0, "/root", kNoLogin);
  if (uid != 0 && uid != kNobodyId)
    text += passwd_line(kSandboxUserName, uid, gid, home, "/bin/sh");
  text += passwd_line("nobody", kNobodyId, kNobodyId, "/nonexistent", kNoLogin);
  return text;
}

std::string group_text(std::uint32_t gid) {
  std::string text = "root:x:0:\n";
  if (gid != 0 && gid != kNobodyId) {
    text += std::string(kSandboxUserName) + ":x:" + std::to_string(gid) + ":\n";
  }
  text += "nogroup:x:" + std::to_string(kNobodyId) + ":\n";
  return text;
}

std::string hosts_text(std::string_view host_name) {
  const std::string name(host_name);
  return "127.0.0.1\tlocalhost " + name + "\n::1\tlocalhost ip6-localhost ip6-loopback " + name +
         "\n";
}

std::string machine_id_text() {
  std::string id = uuid4();
  std::erase(id, '-');
  return id + "\n";
}

std::string boot_id_text() { return uuid4() + "\n"; }

std::string kernel_version_text() {
  struct utsname names {};
  if (::uname(&names) != 0) return "Linux version unknown\n";
  return std::string(names.sysname) + " version " + names.release + " (openai4s) " + names.version +
         "\n";
}

Result<UniqueFd> sealed_memory_file(const char* name, std::string_view text) {
  UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_error("memfd_create", errno);
  if (!write_all(fd.get(), text)) return system_error("write " + std::string(name), errno);
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) !=
      0) {
    return system_error("seal " + std::string(name), errno);
  }
  // Read from its start (bubblewrap reads from the offset to the end).
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return system_error("lseek", errno);
  return fd;
}

}  // namespace o4s::sandbox
