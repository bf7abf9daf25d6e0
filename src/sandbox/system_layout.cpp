#include "sandbox/system_layout.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <mutex>

namespace o4s::sandbox {

namespace {

// What an interpreter and the tools a cell shells out to need. On a merged-
// /usr system bin, sbin and lib* are symlinks into /usr and are recreated as
// symlinks (a bind would follow them and duplicate the mount).
constexpr std::array<const char*, 8> kSystemRoots = {"/usr",   "/bin",   "/sbin",   "/lib",
                                                     "/lib32", "/lib64", "/libx32", "/etc"};
// glibc's get_nprocs and OpenBLAS read the CPU topology here.
constexpr const char* kCpuTopology = "/sys/devices/system/cpu";

constexpr std::size_t kMaxWalkDepth = 12;
constexpr std::size_t kMaxWalkEntries = 50'000;

bool others_may_read(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return (st.st_mode & S_IROTH) && (st.st_mode & S_IXOTH);
  return (st.st_mode & S_IROTH) != 0;
}

bool has_access_acl(const std::string& path) {
  // ENODATA: none. Any other answer (ENOTSUP included) is taken as "maybe".
  return ::lgetxattr(path.c_str(), "system.posix_acl_access", nullptr, 0) >= 0 || errno != ENODATA;
}

SecretEntry secret(FsOperation::Kind kind, const std::string& host, const std::string& path,
                   const struct stat& st) {
  return {{kind, "", path, std::nullopt}, st.st_uid, st.st_gid, has_access_acl(host)};
}

void walk(const std::string& root, const std::string& dir, std::size_t depth, std::size_t& budget,
          std::vector<SecretEntry>& secrets) {
  if (depth > kMaxWalkDepth) return;
  DIR* handle = ::opendir((root + dir).c_str());
  if (handle == nullptr) return;
  while (dirent* entry = ::readdir(handle)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (budget == 0) break;
    --budget;
    std::string path = dir + "/" + name;
    struct stat st {};
    if (::lstat((root + path).c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) continue;  // its target is judged where it lives
    if (S_ISDIR(st.st_mode)) {
      if (!others_may_read(st)) {
        secrets.push_back(secret(FsOperation::Kind::kMaskDir, root + path, path, st));
      } else {
        walk(root, path, depth + 1, budget, secrets);
      }
    } else if (S_ISREG(st.st_mode) && !others_may_read(st)) {
      secrets.push_back(secret(FsOperation::Kind::kMaskFile, root + path, path, st));
    }
  }
  ::closedir(handle);
}

}  // namespace

std::vector<SecretEntry> secrets_under(const std::string& root, const std::string& dir) {
  std::vector<SecretEntry> secrets;
  std::size_t budget = kMaxWalkEntries;
  walk(root, dir, 0, budget, secrets);
  return secrets;
}

bool may_read(const SecretEntry& secret, const HostReader& reader) {
  if (reader.uid == 0 || secret.has_acl || secret.owner == reader.uid) return true;
  return std::find(reader.groups.begin(), reader.groups.end(), secret.group) != reader.groups.end();
}

std::vector<FsOperation> masks_for(const SystemLayout& layout, const HostReader& reader) {
  std::vector<FsOperation> masks;
  for (const auto& secret : layout.secrets) {
    if (may_read(secret, reader)) masks.push_back(secret.mask);
  }
  return masks;
}

SystemLayout build_system_layout(const std::string& root) {
  SystemLayout layout;
  for (const char* path : kSystemRoots) {
    struct stat st {};
    std::string host = root + path;
    if (::lstat(host.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = ::readlink(host.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      layout.operations.push_back({FsOperation::Kind::kSymlink,
                                   std::string(target, static_cast<std::size_t>(n)), path,
                                   std::nullopt});
    } else if (S_ISDIR(st.st_mode)) {
      layout.operations.push_back({FsOperation::Kind::kReadOnlyBind, host, path, std::nullopt});
    }
  }
  struct stat cpu {};
  if (::stat((root + kCpuTopology).c_str(), &cpu) == 0 && S_ISDIR(cpu.st_mode)) {
    layout.operations.push_back(
        {FsOperation::Kind::kReadOnlyBind, root + kCpuTopology, kCpuTopology, std::nullopt});
  }
  layout.secrets = secrets_under(root, "/etc");
  return layout;
}

const SystemLayout& system_layout() {
  static std::once_flag once;
  static SystemLayout layout;
  std::call_once(once, [] { layout = build_system_layout(""); });
  return layout;
}

}  // namespace o4s::sandbox
