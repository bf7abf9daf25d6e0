#include "sandbox/sandbox_identity.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/paths.h"
#include "base/unique_fd.h"
#include "sandbox/workspace_path.h"

namespace o4s::sandbox {

namespace {

// What every sandbox sharing one host uid shares: the limits Linux keeps
// per uid, which one kernel can exhaust for all the others.
constexpr const char* kPerUidLimits =
    "inotify instances, POSIX message queue bytes, queued signals and RLIMIT_NPROC";

}  // namespace

SandboxIdentity choose_identity(const SandboxSettings& settings, uid_t host_uid, gid_t host_gid,
                                std::optional<std::uint32_t> own_uid) {
  SandboxIdentity identity;
  if (host_uid != 0) {
    // Not root: bubblewrap maps the sandbox to this uid, which holds no more
    // than the daemon already does.
    identity.uid = host_uid;
    identity.gid = host_gid;
    identity.chosen_by = "the daemon's own uid";
    identity.shared = "uid " + std::to_string(host_uid) +
                      " is shared by every kernel of this daemon and by the daemon's user, and "
                      "so are " +
                      kPerUidLimits +
                      " (a daemon that is not root cannot give a kernel a uid of its own)";
    return identity;
  }
  identity.dropped = true;
  if (settings.sandbox_uid) {
    identity.uid = *settings.sandbox_uid;
    identity.gid = settings.sandbox_gid.value_or(*settings.sandbox_uid);
    identity.chosen_by = "OPENAI4S_SANDBOX_UID";
    identity.shared = "OPENAI4S_SANDBOX_UID " + std::to_string(identity.uid) +
                      " is one fixed uid: every kernel run as it shares " + kPerUidLimits;
  } else if (own_uid) {
    identity.uid = *own_uid;
    identity.gid = *own_uid;
    identity.own_uid = true;
    identity.chosen_by = "a uid of the kernel's own, leased from " +
                         std::to_string(settings.uid_range.first) + "-" +
                         std::to_string(settings.uid_range.last);
    return identity;
  } else {
    identity.uid = kNobody;
    identity.gid = kNobody;
    identity.chosen_by = "the default (nobody, 65534)";
    // Appended, not `std::string(literal) + ...`: GCC 12's -Warray-bounds
    // misfires on that temporary's inlined memcpy.
    identity.shared = "nobody (65534) is shared by every sandbox run as it: ";
    identity.shared += kPerUidLimits;
  }
  if (settings.sandbox_gid) identity.gid = *settings.sandbox_gid;
  return identity;
}

HostReader host_reader_of(const SandboxIdentity& identity) {
  HostReader reader;
  if (identity.dropped) {
    reader.uid = identity.uid;
    reader.groups = {identity.gid};
    return reader;
  }
  reader.uid = ::geteuid();
  reader.groups = {::getegid()};
  int count = ::getgroups(0, nullptr);
  if (count > 0) {
    std::vector<gid_t> supplementary(static_cast<std::size_t>(count));
    count = ::getgroups(count, supplementary.data());
    // A failure here would under-report: take it as root, which masks all.
    if (count < 0) reader.uid = 0;
    supplementary.resize(count < 0 ? 0 : static_cast<std::size_t>(count));
    reader.groups.insert(reader.groups.end(), supplementary.begin(), supplementary.end());
  }
  return reader;
}

namespace {

// The kernel's POSIX ACL xattr format (linux/posix_acl_xattr.h): a version
// word, then (tag, perm, id) entries sorted by tag, then id.
constexpr std::uint32_t kAclVersion = 2;
constexpr std::uint16_t kUserObj = 0x01, kUser = 0x02, kGroupObj = 0x04, kGroup = 0x08,
                        kMask = 0x10, kOther = 0x20;
constexpr std::uint32_t kUndefinedId = 0xffffffffU;
constexpr const char* kAclName = "system.posix_acl_access";

struct AclEntry {
  std::uint16_t tag;
  std::uint16_t perm;
  std::uint32_t id;
};

std::vector<AclEntry> acl_from_mode(mode_t mode) {
  return {{kUserObj, static_cast<std::uint16_t>((mode >> 6) & 7), kUndefinedId},
          {kGroupObj, static_cast<std::uint16_t>((mode >> 3) & 7), kUndefinedId},
          {kOther, static_cast<std::uint16_t>(mode & 7), kUndefinedId}};
}

std::optional<std::vector<AclEntry>> read_acl(const std::string& path) {
  std::vector<char> buffer(4096);
  ssize_t n = ::getxattr(path.c_str(), kAclName, buffer.data(), buffer.size());
  if (n < 0) return std::nullopt;
  std::vector<AclEntry> entries;
  if (n < 4) return entries;
  for (ssize_t at = 4; at + 8 <= n; at += 8) {
    AclEntry entry{};
    std::memcpy(&entry.tag, buffer.data() + at, 2);
    std::memcpy(&entry.perm, buffer.data() + at + 2, 2);
    std::memcpy(&entry.id, buffer.data() + at + 4, 4);
    entries.push_back(entry);
  }
  return entries;
}

// An ACL is read, changed and written whole: two kernels starting at once
// (a pool's refill beside a create_kernel) that both grant on one ancestor
// would lose one entry, and that kernel's bubblewrap then fails to chdir
// (EACCES). Threads of this host take the mutex, other host processes the
// directory's flock.
class AclEditLock {
 public:
  explicit AclEditLock(const std::string& path)
      : thread_lock_(mutex()), dir_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (dir_.get() >= 0) ::flock(dir_.get(), LOCK_EX);  // released with the fd
  }

 private:
  static std::mutex& mutex() {
    static std::mutex edits;
    return edits;
  }
  std::lock_guard<std::mutex> thread_lock_;
  UniqueFd dir_;
};

// Adds `perm` for `uid` to the directory's access ACL (a named-user entry,
// merged with what is there), never touching its owner or mode bits.
Status grant(const std::string& path, const struct stat& st, std::uint32_t uid, std::uint16_t perm,
             const std::string& shown) {
  AclEditLock lock(path);
  std::vector<AclEntry> entries = read_acl(path).value_or(std::vector<AclEntry>{});
  if (entries.empty()) entries = acl_from_mode(st.st_mode);
  for (const auto& e : entries) {
    if (e.tag == kUser && e.id == uid) perm |= e.perm;
  }
  std::erase_if(entries, [&](const AclEntry& e) {
    return e.tag == kMask || (e.tag == kUser && e.id == uid);
  });
  entries.push_back({kUser, perm, uid});
  // The mask bounds every group-class entry; it must let the new one through
  // and keep the others as they were.
  std::uint16_t mask = 0;
  for (const auto& e : entries) {
    if (e.tag == kUser || e.tag == kGroup || e.tag == kGroupObj) mask |= e.perm;
  }
  entries.push_back({kMask, mask, kUndefinedId});
  std::sort(entries.begin(), entries.end(), [](const AclEntry& a, const AclEntry& b) {
    return a.tag != b.tag ? a.tag < b.tag : a.id < b.id;
  });
  std::string value(4 + 8 * entries.size(), '\0');
  std::memcpy(value.data(), &kAclVersion, 4);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::memcpy(value.data() + 4 + 8 * i, &entries[i].tag, 2);
    std::memcpy(value.data() + 6 + 8 * i, &entries[i].perm, 2);
    std::memcpy(value.data() + 8 + 8 * i, &entries[i].id, 4);
  }
  if (::setxattr(path.c_str(), kAclName, value.data(), value.size(), 0) != 0) {
    return system_error("grant uid " + std::to_string(uid) + " access to " + shown +
                            " (a POSIX ACL; set OPENAI4S_SANDBOX_UID to its owner instead)",
                        errno);
  }
  return {};
}

// May `uid`/`gid` search (walk through) the directory, by its mode bits?
bool can_search(const struct stat& st, std::uint32_t uid, std::uint32_t gid) {
  if (st.st_uid == uid) return st.st_mode & S_IXUSR;
  if (st.st_gid == gid) return st.st_mode & S_IXGRP;
  return st.st_mode & S_IXOTH;
}

}  // namespace

std::vector<std::uint32_t> acl_user_ids(const std::string& directory) {
  std::vector<std::uint32_t> ids;
  for (const auto& entry : read_acl(directory).value_or(std::vector<AclEntry>{})) {
    if (entry.tag == kUser) ids.push_back(entry.id);
  }
  return ids;
}

Status let_walk_to(const SandboxIdentity& identity, const std::string& path) {
  if (!identity.dropped) return {};
  // bubblewrap, running as the sandbox uid, resolves a bind source's path
  // itself: an ancestor it cannot walk through (root's 0700 home, pytest's
  // 0700 temp root) gets search-only access for that uid -- no listing, no
  // reading -- which is the least that lets the bind mount be made.
  std::size_t slash = 0;
  while ((slash = path.find('/', slash + 1)) != std::string::npos) {
    std::string ancestor = path.substr(0, slash);
    struct stat st {};
    if (::stat(ancestor.c_str(), &st) != 0) return system_error("stat " + ancestor, errno);
    if (can_search(st, identity.uid, identity.gid)) continue;
    if (Status granted = grant(ancestor, st, identity.uid, 1, ancestor); !granted) return granted;
  }
  return {};
}

Status hand_over_workspace(const SandboxIdentity& identity, const std::string& workspace) {
  if (!identity.dropped) return {};
  auto held = HeldPath::open(workspace);
  if (!held) return std::move(held).error();
  return hand_over_held_workspace(identity, *held);
}

Status hand_over_held_workspace(const SandboxIdentity& identity, const HeldPath& held) {
  if (!identity.dropped) return {};
  // The ancestors as let_walk_to treats them, then the workspace itself,
  // each reached through its held descriptor: a component a live cell swaps
  // for a symlink meanwhile cannot redirect a grant (root's setxattr) to
  // what the symlink names.
  std::vector<std::string> names = directories_between("/", held.path());
  names.push_back(held.path());
  for (std::size_t i = 1; i < held.size(); ++i) {
    const std::string stable = held.stable(i);
    const std::string& shown = names[i - 1];
    struct stat st {};
    if (::stat(stable.c_str(), &st) != 0) return system_error("stat " + shown, errno);
    if (i + 1 < held.size()) {
      if (can_search(st, identity.uid, identity.gid)) continue;
      if (Status granted = grant(stable, st, identity.uid, 1, shown); !granted) return granted;
      continue;
    }
    if (st.st_uid == identity.uid) return {};  // the sandbox's own directory
    // A named-user ACL entry, not a chown: the directory keeps its owner (git
    // refuses a repository whose root changed hands) and its mode for
    // everyone else. Files the cell creates are the sandbox uid's.
    return grant(stable, st, identity.uid, 7, shown);
  }
  return {};
}

Status hand_over_exchange_dir(const SandboxIdentity& identity, const std::string& dir) {
  if (!identity.dropped) return {};
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return system_error("stat " + dir, errno);
  if (can_search(st, identity.uid, identity.gid)) return {};
  return grant(dir, st, identity.uid, 1, dir);
}

}  // namespace o4s::sandbox
