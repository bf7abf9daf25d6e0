// Thin RAII over the SQLite C API, internal to src/store: a prepared
// statement that finalises itself, an IMMEDIATE transaction that rolls back
// unless committed, and SQLite errors turned into Result values.
#pragma once

#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace o4s::store::sql {

// "sqlite: <what>: <message>". Constraint violations mean the caller passed a
// value the schema refuses (kInvalidArgument); a lock still held after the
// busy timeout is kTimeout; anything else is kSystem.
Error sqlite_error(sqlite3* db, int rc, std::string_view what);

// Runs one or more statements that bind nothing and return no rows we need.
Status exec(sqlite3* db, std::string_view sql);

class Statement {
 public:
  static Result<Statement> prepare(sqlite3* db, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // 1-based positions, as in SQL. Text is copied (SQLITE_TRANSIENT).
  void bind(int index, std::string_view text);
  void bind(int index, const char* text) { bind(index, std::string_view(text)); }
  void bind(int index, const std::string& text) { bind(index, std::string_view(text)); }
  void bind(int index, const std::optional<std::string>& text);
  void bind(int index, std::nullopt_t);
  void bind(int index, double value);
  template <std::integral T>
  void bind(int index, T value) {
    bind_int64(index, static_cast<std::int64_t>(value));
  }
  // Binds the arguments to positions 1..n.
  template <typename... Args>
  Statement& bind_all(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
    return *this;
  }

  // True when a row is ready, false when the statement is done.
  Result<bool> step();
  // Steps to completion, discarding any rows.
  Status run();
  // Ready to bind and step again.
  void reset();

  bool is_null(int column) const;
  std::string text(int column) const;  // "" for NULL
  std::optional<std::string> optional_text(int column) const;
  std::int64_t int64(int column) const;
  // The current row as {column name: value}; NULL becomes null.
  nlohmann::json row_json() const;

 private:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void bind_int64(int index, std::int64_t value);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE takes the write lock up front, so a read-then-write
// sequence cannot fail half way with SQLITE_BUSY (which a deferred
// transaction upgrading its lock can, without waiting for the busy timeout).
class Transaction {
 public:
  static Result<Transaction> begin(sqlite3* db);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();  // rolls back unless committed

  Status commit();

 private:
  explicit Transaction(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace o4s::store::sql
