// A real SQLite store in a fresh temporary directory per test, plus a second,
// independent sqlite3 connection for checking what is actually on disk.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "store/store.h"

namespace o4s::store::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "o4s-store-XXXXXX").string();
    char* made = ::mkdtemp(templ.data());
    EXPECT_NE(made, nullptr);
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A connection of our own to the same file, as Python's sqlite3 would open.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
        SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void exec(const std::string& sql) {
    char* message = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (message != nullptr ? message : "");
    sqlite3_free(message);
  }

  // The first column of the first row, as text; nullopt for no row or NULL.
  std::optional<std::string> text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    std::optional<std::string> value;
    if (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW &&
        sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return value;
  }

  std::int64_t integer(const std::string& sql) { return std::stoll(text(sql).value_or("-1")); }

 private:
  sqlite3* db_ = nullptr;
};

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::open(db_path(), [this] { return clock_ms_.load(); });
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = opened.value();
  }

  // The store's clock starts at the real time and moves only when a test
  // steps it: timestamps have millisecond resolution, and a test that needs
  // two distinct ones steps the clock instead of sleeping.
  void tick(std::int64_t ms = 1) { clock_ms_ += ms; }

  std::string db_path() const { return dir_.file("state/openai4s.db"); }
  Store& store() { return *store_; }

  ScratchDir dir_;
  std::atomic<std::int64_t> clock_ms_{now_ms()};
  std::shared_ptr<Store> store_;
};

}  // namespace o4s::store::testing
