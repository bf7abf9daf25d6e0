// A workspace's environments on disk (issue 30 part 2):
//   <data_dir>/envs/<workspace key>/            the library, shown read-only to
//                                               the workspace's kernels
//     state.json                                what was installed, when, from
//                                               where, by which decision
//     <name>/<generation>/                      one pip prefix + "r-library"
//   <data_dir>/env-staging/<random>/            an install in progress
// A generation is never changed once published: an install copies the
// current one into a stage, installs there, and renames the stage into
// place only on success. A running kernel keeps importing from the
// generation it was given until it is handed the next one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::host {

using Json = nlohmann::json;

// The library directory of `workspace`'s environments (not created).
std::string env_library_root(const std::string& data_dir, const std::string& workspace);
// The same for `workspace` as given (resolved here, as the dispatcher
// resolves its own), created: what a kernel of that workspace mounts.
Result<std::string> ensure_env_library(const std::string& data_dir, const std::string& workspace);

class EnvLibrary {
 public:
  // Creates the library directory and takes its lock (installs in one
  // workspace run one at a time; list and use wait for them).
  static Result<EnvLibrary> open(const std::string& data_dir, const std::string& workspace);

  const std::string& root() const { return root_; }
  // {"active": name or null, "envs": {name: {...}}}
  Json state() const;
  Status save(const Json& state) const;

  // A fresh staging directory (on the library's file system, so the final
  // rename is atomic), holding a copy of `from` when it is not empty.
  Result<std::string> stage(const std::string& from) const;
  std::string generation_dir(const std::string& name, int generation) const;
  // Renames a finished stage into place as `name`'s `generation`.
  Status publish(const std::string& stage, const std::string& name, int generation) const;

 private:
  EnvLibrary(std::string data_dir, std::string root, UniqueFd lock)
      : data_dir_(std::move(data_dir)), root_(std::move(root)), lock_(std::move(lock)) {}

  std::string data_dir_;
  std::string root_;
  UniqueFd lock_;  // flock'ed for the library's life
};

// The prefix's Python package directory (Debian's "local/lib/python3.X/
// dist-packages", or "lib/python3.X/site-packages"); empty when none.
std::string python_site_dir(const std::string& prefix);

// Bytes under `path` (regular files, symlinks not followed).
std::uint64_t tree_bytes(const std::string& path);

}  // namespace o4s::host
