// The `host.env` methods (issue 30 part 2; spec kernel.md §4 `env.*`):
// env_setup installs packages into a workspace environment on the host
// side, staged and swapped in only on success; env_list reports what was
// installed, when, from where and by which decision; env_use makes an
// environment the active one; env_lock exports one as a lock (versions and
// sha256 hashes). Each result carries the paths the calling worker puts on
// its sys.path (`python_path`) or .libPaths (`r_library`).
#pragma once

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace o4s::host {

class HostDispatcher;
struct CallContext;
using Json = nlohmann::json;

Result<Json> env_setup(HostDispatcher& host, const Json& args, const CallContext& context);
Result<Json> env_list(HostDispatcher& host, const Json& args, const CallContext& context);
Result<Json> env_use(HostDispatcher& host, const Json& args, const CallContext& context);
Result<Json> env_lock(HostDispatcher& host, const Json& args, const CallContext& context);

}  // namespace o4s::host
