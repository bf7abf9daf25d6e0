#include "host/env_library.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/file_io.h"
#include "base/random_id.h"
#include "base/sha256.h"

namespace o4s::host {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStateFile = "state.json";

Error fs_error(const std::string& what, const std::error_code& ec) {
  return system_error(what, ec.value());
}

}  // namespace

std::string env_library_root(const std::string& data_dir, const std::string& workspace) {
  // One library per workspace: the key is a digest of its resolved path.
  return data_dir + "/envs/" + sha256_hex(workspace).substr(0, 16);
}

Result<std::string> ensure_env_library(const std::string& data_dir, const std::string& workspace) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(workspace), ec);
  if (ec) return fs_error("resolve " + workspace, ec);
  std::string root = env_library_root(data_dir, resolved.string());
  fs::create_directories(root, ec);
  if (ec) return fs_error("create the environment library " + root, ec);
  return root;
}

Result<EnvLibrary> EnvLibrary::open(const std::string& data_dir, const std::string& workspace) {
  std::string root = env_library_root(data_dir, workspace);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return fs_error("create the environment library " + root, ec);
  UniqueFd lock(::open((root + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock) return system_error("open " + root + "/.lock", errno);
  while (::flock(lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return system_error("lock " + root, errno);
  }
  return EnvLibrary(data_dir, std::move(root), std::move(lock));
}

Json EnvLibrary::state() const {
  auto text = read_file(root_ + "/" + kStateFile);
  Json state = text ? Json::parse(text.value(), nullptr, false) : Json();
  if (!state.is_object()) state = Json::object();
  if (!state.contains("active")) state["active"] = nullptr;
  if (!state.contains("envs") || !state["envs"].is_object()) state["envs"] = Json::object();
  return state;
}

Status EnvLibrary::save(const Json& state) const {
  const std::string path = root_ + "/" + kStateFile;
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << state.dump(2) << "\n";
    if (!out) return system_error("write " + temporary, errno);
  }
  // The workspace's kernels read the active environment from it (under a
  // sandbox uid of their own), whatever the host's umask was.
  std::error_code ec;
  fs::permissions(temporary,
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                      fs::perms::others_read,
                  ec);
  if (::rename(temporary.c_str(), path.c_str()) != 0) return system_error("rename " + path, errno);
  return {};
}

Result<std::string> EnvLibrary::stage(const std::string& from) const {
  std::string dir = data_dir_ + "/env-staging/" + random_hex(8);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fs_error("create the staging directory " + dir, ec);
  if (!from.empty()) {
    fs::copy(from, dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
    if (ec) return fs_error("copy " + from + " into the stage", ec);
  }
  return dir;
}

std::string EnvLibrary::generation_dir(const std::string& name, int generation) const {
  return root_ + "/" + name + "/" + std::to_string(generation);
}

Status EnvLibrary::publish(const std::string& stage, const std::string& name,
                           int generation) const {
  std::error_code ec;
  fs::create_directories(root_ + "/" + name, ec);
  if (ec) return fs_error("create " + root_ + "/" + name, ec);
  // Readable by a kernel's sandbox uid, whatever the host's umask was.
  fs::permissions(stage,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  std::string target = generation_dir(name, generation);
  if (::rename(stage.c_str(), target.c_str()) != 0)
    return system_error("rename to " + target, errno);
  return {};
}

std::string python_site_dir(const std::string& prefix) {
  for (const char* base : {"/local/lib", "/lib"}) {
    std::error_code ec;
    fs::directory_iterator it(prefix + base, ec);
    if (ec) continue;
    for (const auto& entry : it) {
      std::string version = entry.path().filename().string();
      if (!version.starts_with("python3")) continue;
      for (const char* leaf : {"/dist-packages", "/site-packages"}) {
        std::string candidate = entry.path().string() + leaf;
        if (fs::is_directory(candidate, ec)) return candidate;
      }
    }
  }
  return {};
}

std::uint64_t tree_bytes(const std::string& path) {
  std::uint64_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec) && !it->is_symlink(size_ec)) {
      auto size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

}  // namespace o4s::host
