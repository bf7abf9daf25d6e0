// A typed builder for the bubblewrap command line. It produces an argument
// vector (never a shell string), validates every path and descriptor, and
// orders the filesystem operations so a mount never hides a later one: an
// operation on a path always follows every operation on its ancestors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace o4s::sandbox {

enum class Namespace { kUser, kPid, kIpc, kUts, kNet };

struct FsOperation {
  // Declaration order is the tie-break on one path: a fresh filesystem comes
  // first, read-write binds next, read-only binds and masks last, so a
  // read-only runtime root inside the workspace stays read-only.
  enum class Kind {
    kSymlink,         // --symlink <source = link target> <target>
    kDev,             // --dev <target>
    kProc,            // --proc <target>
    kTmpfs,           // [--size <bytes>] --tmpfs <target>
    kBind,            // --bind <source> <target>
    kBindFd,          // --bind-fd <source_fd> <target>
    kReadOnlyBind,    // --ro-bind <source> <target>
    kReadOnlyBindFd,  // --ro-bind-fd <source_fd> <target>
    kReadOnlyData,    // --perms 0444 --ro-bind-data <source_fd> <target> (a file's text)
    kMaskFile,        // --ro-bind /dev/null <target>
    kMaskDir,         // [--size] --tmpfs <target> --remount-ro <target>
  };
  Kind kind;
  std::string source;                       // kBind, kReadOnlyBind: host path; kSymlink: link text
  std::string target;                       // the path inside the sandbox
  std::optional<std::uint64_t> size_bytes;  // kTmpfs, kMaskDir
  // kReadOnlyData: a descriptor bubblewrap reads the file's text from.
  // kBindFd, kReadOnlyBindFd: an O_PATH descriptor the host opened. The
  // sandbox may run as a uid that cannot walk to the source path (a root
  // host's 0700 directories); a descriptor needs no path walk.
  int source_fd = -1;
};

class BwrapCommand {
 public:
  explicit BwrapCommand(std::string program) : program_(std::move(program)) {}

  BwrapCommand& unshare(Namespace ns);
  // SIGKILL the sandbox when the spawning thread exits (see proc/supervisor.h).
  BwrapCommand& die_with_parent();
  BwrapCommand& drop_all_capabilities();
  // The sandbox may not create user namespaces of its own (bwrap >= 0.8).
  BwrapCommand& disable_nested_user_namespaces();
  // The sandbox's own host name (needs the UTS namespace: unshare(kUts)).
  BwrapCommand& hostname(std::string name);
  // bwrap writes {"child-pid": N} (N = its namespace init's host pid) here.
  BwrapCommand& info_fd(int fd);
  // bwrap reads a compiled BPF program from this descriptor.
  BwrapCommand& seccomp_fd(int fd);
  BwrapCommand& add(FsOperation operation);
  // Remounts an already populated path read-only once every operation has
  // run ("/" included: bubblewrap's root is a writable, unsized tmpfs, and
  // so is the one --dev creates).
  BwrapCommand& remount_read_only(std::string path);
  BwrapCommand& chdir(std::string directory);

  // The full argv: program, options, "--", command. Fails on a relative or
  // non-normal path, a negative fd, an empty command or a repeated flag.
  Result<std::vector<std::string>> build(const std::vector<std::string>& command) const;

  const std::vector<FsOperation>& operations() const { return operations_; }

 private:
  std::string program_;
  std::vector<Namespace> namespaces_;
  bool die_with_parent_ = false;
  bool drop_capabilities_ = false;
  bool disable_userns_ = false;
  std::optional<std::string> hostname_;
  std::optional<int> info_fd_;
  std::optional<int> seccomp_fd_;
  std::vector<FsOperation> operations_;
  std::vector<std::string> read_only_remounts_;
  std::optional<std::string> chdir_;
};

// True for "/", "/a/b": absolute, no empty, "." or ".." component, no
// trailing slash, no NUL.
bool is_normal_absolute_path(const std::string& path);

// "/a/b/c" -> 3; "/" -> 0.
std::size_t path_depth(const std::string& path);

}  // namespace o4s::sandbox
