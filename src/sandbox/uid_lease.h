// A host uid (and the gid of the same number) of one kernel's own, leased
// from a range no real account uses, in the spirit of systemd's dynamic
// users. Linux counts several limits per uid -- inotify instances, POSIX
// message queue bytes, queued signals, RLIMIT_NPROC -- so kernels sharing a
// uid could starve one another; a root daemon gives each kernel its own.
//
// Exclusion across daemons: one lock file per uid in a root-only run
// directory, held with flock(2) for as long as the lease lives; the kernel
// drops a dead holder's lock with its descriptors. The file's content says
// whether its last holder let it go cleanly: empty when released with no
// process of the uid left, the holder's pid while held. A uid whose file is
// not empty (its holder died, or a process of it outlived the release) is
// leased again only once /proc shows no process running as it.
//
// A lease is taken once per kernel (kept across restarts) and released by
// its destructor, after the sandbox's processes are gone.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::sandbox {

struct UidRange {
  std::uint32_t first = 0;
  std::uint32_t last = 0;  // inclusive
};

// 0x4F340000 + 64 Ki: far above the uids of real accounts (systemd's regular
// users stop at 60000, its dynamic users at 65519, and container ranges
// start at 524288 in multiples of 65536 -- this one's 20275th), and every
// candidate is checked against the user and group databases anyway.
inline constexpr UidRange kDefaultUidRange{0x4F340000U, 0x4F34FFFFU};
inline constexpr const char* kDefaultRunDirectory = "/run/openai4s/sandbox-uids";

class UidLease {
 public:
  // The lowest free uid of `range`, trying `preferred` first (uids a
  // kernel of the same workspace had: its files stay writable to the next).
  static Result<UidLease> acquire(const std::string& run_directory, const UidRange& range,
                                  const std::vector<std::uint32_t>& preferred = {});

  UidLease(UidLease&&) noexcept = default;
  UidLease& operator=(UidLease&&) noexcept;
  UidLease(const UidLease&) = delete;
  UidLease& operator=(const UidLease&) = delete;
  ~UidLease();

  std::uint32_t uid() const { return uid_; }
  std::uint32_t gid() const { return uid_; }

 private:
  UidLease(UniqueFd lock, std::uint32_t uid) : lock_(std::move(lock)), uid_(uid) {}
  void release();

  UniqueFd lock_;  // the uid's lock file, flock()ed
  std::uint32_t uid_ = 0;
};

// Does any process on this host run as `uid` (real, effective, saved or
// filesystem)? Reads /proc; nullopt when /proc cannot be listed.
std::optional<bool> uid_in_use(std::uint32_t uid);

// "1328807936-1328873471" -> the range; refuses 0, 65534/65535, -1 and an
// inverted or empty range.
Result<UidRange> parse_uid_range(const std::string& text);

}  // namespace o4s::sandbox
