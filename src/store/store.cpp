// Opening the store and the small shared pieces: settings, ids, clock.
#include "store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <utility>

#include "base/random_id.h"
#include "base/unique_fd.h"
#include "store/schema.h"
#include "store/sqlite_util.h"
#include "store/store_internal.h"

namespace o4s::store {

namespace {

constexpr int kBusyTimeoutMs = 5000;

// mkdir -p, each directory we create being 0700. Directories that already
// exist keep their mode: a shared parent such as /tmp must not be tightened.
Status ensure_directory(const std::filesystem::path& dir) {
  if (dir.empty()) return {};
  std::filesystem::path prefix;
  for (const auto& part : dir) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) == 0) {
      // The umask may have taken owner bits away; state the mode exactly.
      if (::chmod(prefix.c_str(), 0700) != 0)
        return system_error("chmod: " + prefix.string(), errno);
      continue;
    }
    int err = errno;
    // An existing ancestor we may not write to can report EACCES, not EEXIST.
    struct stat existing {};
    if (err != EEXIST && ::stat(prefix.c_str(), &existing) != 0) {
      return system_error("mkdir: " + prefix.string(), err);
    }
  }
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return system_error("stat: " + dir.string(), errno);
  if (!S_ISDIR(info.st_mode)) return system_error("store directory: " + dir.string(), ENOTDIR);
  return {};
}

// Creating the file ourselves with 0600 leaves no window in which SQLite's
// default 0644 would expose it; an existing file of ours is tightened too.
Status create_private_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600));
  if (!fd.valid()) return system_error("open: " + path, errno);
  // Best effort: a file owned by someone else cannot be tightened by us, and
  // SQLite itself reports whether it is usable.
  (void)::fchmod(fd.get(), 0600);
  return {};
}

// SQLite gives its sidecar files the database's mode; this covers sidecars
// left behind by an older writer.
void tighten_sidecars(const std::string& path) {
  for (const char* suffix : {"-journal", "-wal", "-shm"}) {
    std::string sidecar = path + suffix;
    (void)::chmod(sidecar.c_str(), 0600);
  }
}

Status configure(sqlite3* db) {
  sqlite3_extended_result_codes(db, 1);
  int rc = sqlite3_busy_timeout(db, kBusyTimeoutMs);
  if (rc != SQLITE_OK) return sql::sqlite_error(db, rc, "busy_timeout");
  if (auto status = sql::exec(db, "PRAGMA foreign_keys = ON"); !status) return status;
  // Rollback journal, as the spec asks. A file some other tool switched to
  // WAL is switched back when no one else holds it open; when that fails we
  // still work, just in WAL mode, so the result is deliberately ignored.
  (void)sql::exec(db, "PRAGMA journal_mode = DELETE");
  return {};
}

}  // namespace

Result<std::shared_ptr<Store>> Store::open(const std::string& path, Clock clock) {
  if (path.empty()) return make_error(ErrorCode::kInvalidArgument, "store path is empty");
  if (auto status = ensure_directory(std::filesystem::path(path).parent_path()); !status) {
    return std::move(status).error();
  }
  if (auto status = create_private_file(path); !status) return std::move(status).error();

  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error error = sql::sqlite_error(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return error;
  }
  // From here the Store owns the connection and its destructor closes it.
  std::shared_ptr<Store> store(new Store(path, db, std::move(clock)));
  if (auto status = configure(db); !status) return std::move(status).error();
  if (auto status = migrate(db); !status) return std::move(status).error();
  tighten_sidecars(path);
  return store;
}

Store::Store(std::string path, sqlite3* db, Clock clock)
    : path_(std::move(path)), db_(db), clock_(std::move(clock)) {}

Store::~Store() { sqlite3_close_v2(db_); }

int Store::schema_version() const {
  std::lock_guard lock(mutex_);
  auto version = user_version(db_);
  return version ? version.value() : 0;
}

Result<std::optional<std::string>> Store::get_setting(const std::string& key) {
  std::lock_guard lock(mutex_);
  return internal::read_setting(db_, key);
}

Status Store::set_setting(const std::string& key, const std::string& value) {
  if (key.empty()) return make_error(ErrorCode::kInvalidArgument, "setting key is empty");
  std::lock_guard lock(mutex_);
  return internal::write_setting(db_, key, value, timestamp());
}

namespace internal {

Result<std::optional<std::string>> read_setting(sqlite3* db, const std::string& key) {
  auto stmt = sql::Statement::prepare(db, "SELECT value FROM settings WHERE key = ?");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(key);
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  if (!row.value()) return std::optional<std::string>();
  return stmt->optional_text(0);
}

Status write_setting(sqlite3* db, const std::string& key, const std::string& value,
                     std::int64_t now) {
  auto stmt = sql::Statement::prepare(
      db,
      "INSERT INTO settings(key, value, updated_at) VALUES (?, ?, ?) "
      "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at");
  if (!stmt) return std::move(stmt).error();
  return stmt->bind_all(key, value, now).run();
}

}  // namespace internal

std::int64_t now_ms() {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string new_id(const std::string& prefix) {
  // 12 hex characters: the random part of a UUID4's first 12 digits.
  return prefix + random_hex(6);
}

}  // namespace o4s::store
