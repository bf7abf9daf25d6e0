#include "store/sqlite_util.h"

#include <cstdint>
#include <utility>

namespace o4s::store::sql {

namespace {

// SQLITE_TRANSIENT is an old-style cast of -1 in sqlite3.h; spelled out here so
// the warnings stay on.
sqlite3_destructor_type transient() {
  return reinterpret_cast<sqlite3_destructor_type>(static_cast<std::intptr_t>(-1));
}

}  // namespace

Error sqlite_error(sqlite3* db, int rc, std::string_view what) {
  std::string message = "sqlite: ";
  message += what;
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  ErrorCode code = ErrorCode::kSystem;
  switch (rc & 0xFF) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      code = ErrorCode::kInvalidArgument;
      break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      code = ErrorCode::kTimeout;
      break;
    default:
      break;
  }
  Error error = make_error(code, std::move(message));
  if (db != nullptr && (rc & 0xFF) == SQLITE_IOERR) error.sys_errno = sqlite3_system_errno(db);
  return error;
}

Status exec(sqlite3* db, std::string_view sql) {
  std::string text(sql);
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqlite_error(db, rc, "exec");
  return {};
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sqlite_error(db, rc, "prepare");
  }
  return Statement(db, stmt);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int index, std::string_view text) {
  // A null data pointer would bind SQL NULL, not the empty string.
  const char* data = text.data() != nullptr ? text.data() : "";
  sqlite3_bind_text64(stmt_, index, data, text.size(), transient(), SQLITE_UTF8);
}

void Statement::bind(int index, const std::optional<std::string>& text) {
  if (text) {
    bind(index, std::string_view(*text));
  } else {
    sqlite3_bind_null(stmt_, index);
  }
}

void Statement::bind(int index, std::nullopt_t) { sqlite3_bind_null(stmt_, index); }

void Statement::bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }

void Statement::bind_int64(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, static_cast<sqlite3_int64>(value));
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_error(db_, rc, "step");
}

Status Statement::run() {
  while (true) {
    auto row = step();
    if (!row) return std::move(row).error();
    if (!row.value()) return {};
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::string Statement::text(int column) const {
  const unsigned char* data = sqlite3_column_text(stmt_, column);
  if (data == nullptr) return {};
  auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  return std::string(reinterpret_cast<const char*>(data), size);
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::int64_t Statement::int64(int column) const {
  return static_cast<std::int64_t>(sqlite3_column_int64(stmt_, column));
}

nlohmann::json Statement::row_json() const {
  nlohmann::json row = nlohmann::json::object();
  int columns = sqlite3_column_count(stmt_);
  for (int i = 0; i < columns; ++i) {
    std::string name = sqlite3_column_name(stmt_, i);
    switch (sqlite3_column_type(stmt_, i)) {
      case SQLITE_INTEGER:
        row[name] = int64(i);
        break;
      case SQLITE_FLOAT:
        row[name] = sqlite3_column_double(stmt_, i);
        break;
      case SQLITE_NULL:
        row[name] = nullptr;
        break;
      default:
        row[name] = text(i);
        break;
    }
  }
  return row;
}

Result<Transaction> Transaction::begin(sqlite3* db) {
  if (auto status = exec(db, "BEGIN IMMEDIATE"); !status) return std::move(status).error();
  return Transaction(db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  // A failed step inside the transaction may already have rolled it back
  // (SQLite does so on some errors); only roll back what is still open.
  if (db_ != nullptr && sqlite3_get_autocommit(db_) == 0) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Status Transaction::commit() {
  sqlite3* db = std::exchange(db_, nullptr);
  int rc = sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(db, rc, "commit");
    if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return error;
  }
  return {};
}

}  // namespace o4s::store::sql
