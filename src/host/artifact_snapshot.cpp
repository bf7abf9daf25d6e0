#include "host/artifact_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "base/random_id.h"
#include "base/sha256.h"
#include "base/unique_fd.h"

namespace o4s::host {

namespace {

constexpr std::size_t kBufferBytes = 1 << 20;

Error too_large(const std::string& label, std::int64_t seen, std::int64_t max_bytes) {
  return make_error(ErrorCode::kInvalidArgument,
                    "save_artifact: " + label + " holds at least " + std::to_string(seen) +
                        " bytes; one artifact may be at most " + std::to_string(max_bytes) +
                        " bytes (OPENAI4S_ARTIFACT_MAX_BYTES)");
}

// Hashes `count` zero bytes: a hole reads as zeros.
void hash_zeros(Sha256& digest, std::int64_t count) {
  static const std::string zeros(kBufferBytes, '\0');
  while (count > 0) {
    auto n = static_cast<std::size_t>(
        std::min<std::int64_t>(count, static_cast<std::int64_t>(zeros.size())));
    digest.update(std::string_view(zeros.data(), n));
    count -= static_cast<std::int64_t>(n);
  }
}

Status write_all_at(int fd, std::string_view data, off_t offset, const std::string& to) {
  while (!data.empty()) {
    ssize_t w = ::pwrite(fd, data.data(), data.size(), offset);
    if (w < 0) {
      if (errno == EINTR) continue;
      return system_error("write " + to, errno);
    }
    data.remove_prefix(static_cast<std::size_t>(w));
    offset += w;
  }
  return {};
}

// Copies [start, end) (end < 0: to end of file) and hashes it; returns the
// offset reached (less than end only at end of file).
Result<off_t> copy_range(int from, int to_fd, off_t start, off_t end, Sha256& digest,
                         std::vector<char>& buffer, const std::string& to, std::int64_t max_bytes,
                         const std::string& label) {
  off_t offset = start;
  while (end < 0 || offset < end) {
    std::size_t want = buffer.size();
    if (end >= 0) {
      want = static_cast<std::size_t>(std::min<off_t>(end - offset, static_cast<off_t>(want)));
    }
    ssize_t n = ::pread(from, buffer.data(), want, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("read artifact source", errno);
    }
    if (n == 0) break;
    if (offset + n > max_bytes) return too_large(label, offset + n, max_bytes);
    std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
    digest.update(chunk);
    if (Status ok = write_all_at(to_fd, chunk, offset, to); !ok) return std::move(ok).error();
    offset += n;
  }
  return offset;
}

}  // namespace

Result<StagedSnapshot> stage_snapshot(int from_fd, const std::string& objects_dir,
                                      const std::string& label, std::int64_t max_bytes) {
  struct stat st {};
  if (::fstat(from_fd, &st) != 0) return system_error("stat " + label, errno);
  if (st.st_size > max_bytes) return too_large(label, st.st_size, max_bytes);

  std::error_code ec;
  std::filesystem::create_directories(objects_dir, ec);
  if (ec) return system_error("create " + objects_dir, ec.value());
  StagedSnapshot staged;
  staged.staged_path = objects_dir + "/.staging-" + random_hex(8);
  UniqueFd out(::open(staged.staged_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!out) return system_error("create " + staged.staged_path, errno);
  auto fail = [&](Error error) -> Result<StagedSnapshot> {
    ::unlink(staged.staged_path.c_str());
    return error;
  };

  Sha256 digest;
  std::vector<char> buffer(kBufferBytes);
  off_t offset = 0;
  // Walk data segments; where the filesystem cannot say (EINVAL/ENXIO at
  // start), one plain copy of everything.
  for (;;) {
    off_t data = ::lseek(from_fd, offset, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole (or nothing) from here on
      auto copied = copy_range(from_fd, out.get(), offset, -1, digest, buffer, staged.staged_path,
                               max_bytes, label);
      if (!copied) return fail(std::move(copied).error());
      offset = copied.value();
      break;
    }
    off_t hole = ::lseek(from_fd, data, SEEK_HOLE);
    if (hole < 0) return fail(system_error("seek " + label, errno));
    hash_zeros(digest, data - offset);
    auto copied = copy_range(from_fd, out.get(), data, hole, digest, buffer, staged.staged_path,
                             max_bytes, label);
    if (!copied) return fail(std::move(copied).error());
    offset = copied.value();
    if (offset < hole) break;  // the file shrank under us: its end is here
  }
  // A trailing hole: the logical size, without allocating it.
  struct stat now {};
  if (::fstat(from_fd, &now) != 0) return fail(system_error("stat " + label, errno));
  if (now.st_size > max_bytes) return fail(too_large(label, now.st_size, max_bytes));
  if (now.st_size > offset) {
    hash_zeros(digest, now.st_size - offset);
    offset = now.st_size;
  }
  if (::ftruncate(out.get(), offset) != 0) {
    return fail(system_error("truncate " + staged.staged_path, errno));
  }
  if (::fsync(out.get()) != 0) return fail(system_error("fsync " + staged.staged_path, errno));
  staged.checksum = digest.hex_digest();
  staged.size_bytes = offset;
  return staged;
}

Result<std::string> commit_snapshot(const StagedSnapshot& staged, const std::string& objects_dir) {
  std::string object = objects_dir + "/sha256-" + staged.checksum;
  // link() never replaces: the first copy of these bytes stays the object.
  if (::link(staged.staged_path.c_str(), object.c_str()) != 0 && errno != EEXIST) {
    int saved = errno;
    discard_snapshot(staged);
    return system_error("store " + object, saved);
  }
  discard_snapshot(staged);
  return object;
}

void discard_snapshot(const StagedSnapshot& staged) { ::unlink(staged.staged_path.c_str()); }

}  // namespace o4s::host
