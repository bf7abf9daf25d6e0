// A scratch directory for one test; part of the test main's library, so the
// suites of the lowest modules (base) can use it without the process fakes.
#pragma once

#include <string>

namespace o4s::testing {

// A fresh directory removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `content` to `name` with the given mode; returns the full path.
  std::string write_file(const std::string& name, const std::string& content,
                         unsigned mode = 0644) const;

 private:
  std::string path_;
};

}  // namespace o4s::testing
