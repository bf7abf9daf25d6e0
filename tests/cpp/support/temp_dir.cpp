#include "support/temp_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace o4s::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/o4s-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write_file(const std::string& name, const std::string& content,
                                unsigned mode) const {
  std::string full = file(name);
  {
    std::ofstream out(full, std::ios::binary);
    out << content;
  }
  ::chmod(full.c_str(), static_cast<mode_t>(mode));
  return full;
}

}  // namespace o4s::testing
