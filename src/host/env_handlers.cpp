#include "host/env_handlers.h"

#include <algorithm>
#include <filesystem>

#include "base/ascii.h"
#include "base/file_io.h"
#include "base/scope_exit.h"
#include "base/sha256.h"
#include "base/utc_time.h"
#include "host/dispatcher.h"
#include "host/env_install.h"
#include "host/env_library.h"
#include "host/env_r_repos.h"
#include "host/env_sources.h"

namespace o4s::host {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxPackages = 64;
constexpr std::size_t kMaxRequirementChars = 200;
constexpr const char* kDefaultEnv = "default";
constexpr const char* kRPrefix = "r:";

Json soft(const std::string& method, const std::string& message) {
  return Json{{"error", method + ": " + message}};
}

Json spec_of(const Json& args) {
  return !args.empty() && args[0].is_object() ? args[0] : Json::object();
}

bool valid_env_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A requirement pip reads as a name and version constraints, never as an
// option, a path or a URL.
bool valid_requirement(const std::string& text) {
  if (text.empty() || text.size() > kMaxRequirementChars || !ascii::is_alnum(text.front())) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return ascii::is_alnum(c) || std::string_view("._-[],=<>!~ ").find(c) != std::string_view::npos;
  });
}

bool valid_r_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || !ascii::is_alpha(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '.'; });
}

struct Request {
  std::string name;
  std::vector<std::string> python;  // requirements
  std::vector<std::string> r;       // package names
};

Result<Request> parse_request(const Json& spec) {
  Request request;
  const Json& name = spec.contains("name") ? spec["name"] : Json();
  request.name = name.is_string() ? name.get<std::string>() : kDefaultEnv;
  if (!valid_env_name(request.name)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "an environment name is 1-64 letters, digits, '-', '_' or '.'");
  }
  const Json packages = spec.contains("packages") ? spec["packages"] : Json();
  Json list = packages.is_string() ? Json::array({packages}) : packages;
  if (!list.is_array() || list.empty() || list.size() > kMaxPackages) {
    return make_error(ErrorCode::kInvalidArgument,
                      "packages must be a list of 1 to 64 package names");
  }
  for (const Json& item : list) {
    std::string text = item.is_string() ? item.get<std::string>() : std::string();
    if (text.starts_with(kRPrefix)) {
      std::string r_name = text.substr(2);
      if (!valid_r_name(r_name)) {
        return make_error(ErrorCode::kInvalidArgument, "not an R package name: " + item.dump());
      }
      request.r.push_back(r_name);
    } else if (valid_requirement(text)) {
      request.python.push_back(text);
    } else {
      return make_error(ErrorCode::kInvalidArgument,
                        "not a package requirement (a name, optional extras and version "
                        "constraints; no paths, URLs or options): " +
                            item.dump());
    }
  }
  return request;
}

Status check_url_sources(const EnvSources& sources, const HostSettings& settings) {
  std::vector<std::string> urls = sources.find_links;
  if (!sources.pip_index_url.empty()) urls.push_back(sources.pip_index_url);
  urls.insert(urls.end(), sources.r_repos.begin(), sources.r_repos.end());
  for (const auto& url : urls) {
    if (!is_url(url)) continue;
    if (Status ok = check_source_url(url, settings, sources.allow_private); !ok) return ok;
  }
  return {};
}

// What pip's report says it installed: name -> {version, sha256, source}.
Json python_installed(const std::string& report_path) {
  Json installed = Json::object();
  auto text = read_file(report_path);
  Json report = text ? Json::parse(text.value(), nullptr, false) : Json();
  if (!report.is_object() || !report.contains("install")) return installed;
  for (const Json& item : report["install"]) {
    const Json& meta = item.value("metadata", Json::object());
    const Json& download = item.value("download_info", Json::object());
    std::string hash = download.value("archive_info", Json::object()).value("hash", "");
    if (hash.starts_with("sha256=")) hash = hash.substr(7);
    std::string name = ascii::lowered(meta.value("name", ""));
    if (name.empty()) continue;
    installed[name] = {{"version", meta.value("version", "")},
                       {"sha256", hash},
                       {"source", download.value("url", "")}};
  }
  return installed;
}

// What went over the install proxy, for the call's audit row.
Json network_record(const std::vector<ProxyConnection>& connections) {
  Json rows = Json::array();
  for (const auto& c : connections) {
    rows.push_back({{"method", c.method},
                    {"target", c.target},
                    {"address", c.address},
                    {"allowed", c.allowed},
                    {"reason", c.reason},
                    {"bytes_out", c.bytes_out},
                    {"bytes_in", c.bytes_in}});
  }
  return rows;
}

// Why an install that failed may have: what its script or a redirect
// tried to reach and the proxy refused (the first few).
std::string refused_connections(const std::vector<ProxyConnection>& connections) {
  std::string text;
  int shown = 0;
  for (const auto& c : connections) {
    if (c.allowed || shown == 3) continue;
    text += (shown++ ? "; " : "") + (c.target.empty() ? c.reason : c.target + ": " + c.reason);
  }
  if (text.empty()) return text;
  return "(an install reaches only its configured sources; refused: " + text + ")";
}

// Each connection of the install is an audit row of its own (method
// "env_connection"), tied to the env_setup call's permission decision.
void audit_connections(HostDispatcher& host, const CallContext& context,
                       const std::vector<ProxyConnection>& connections) {
  Json rows = network_record(connections);
  for (std::size_t i = 0; i < connections.size(); ++i) {
    const ProxyConnection& c = connections[i];
    store::HostCallRecord row;
    row.method = "env_connection";
    row.args = Json::array({{{"method", c.method}, {"target", c.target}}});
    row.ok = c.allowed && c.reason.empty();
    row.frame_id = context.frame_id;
    row.result = rows[i];
    row.permission_decision_id = context.permission_decision_id;
    row.side_effect_class = "network";
    row.resource_keys = {"net:" + c.target};
    row.summary = c.method + " " + c.target;
    row.decided_by = "install proxy";
    const std::string carried =
        " (" + std::to_string(c.bytes_in) + " bytes in, " + std::to_string(c.bytes_out) + " out)";
    row.outcome = !c.allowed         ? "refused: " + c.reason
                  : c.reason.empty() ? "ok" + carried
                                     : c.reason + carried;
    (void)host.store()->log_host_call(row);
  }
}

struct Staged {
  Json python = Json::object();
  Json r = Json::object();
};

// The R packages from the R repositories (env_r_repos.h): a URL's tarball
// is downloaded by the host beside the stage, never into it, so R CMD
// INSTALL runs on local files only.
Status install_r(const std::string& stage, const std::vector<std::string>& names,
                 const EnvSources& sources, const HostSettings& settings,
                 std::chrono::steady_clock::time_point deadline, Json& installed) {
  const std::string downloads = stage + ".r-sources";
  std::error_code ec;
  fs::create_directories(downloads, ec);
  if (ec) return system_error("mkdir " + downloads, ec.value());
  ScopeExit cleanup([&downloads] {
    std::error_code ignored;
    fs::remove_all(downloads, ignored);
  });
  std::string library = stage + "/r-library";
  auto found = find_r_packages(sources, settings, names, library, downloads, deadline);
  if (!found) return std::move(found).error();
  std::vector<std::string> tarballs;
  std::vector<std::string> dirs;
  for (const RTarball& tarball : found.value()) {
    tarballs.push_back(tarball.path);
    dirs.push_back(fs::path(tarball.path).parent_path().string());
    installed[tarball.name] = {
        {"version", tarball.version}, {"sha256", tarball.sha256}, {"source", tarball.source}};
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  fs::create_directories(library);
  return r_install(library, tarballs, dirs, deadline);
}

Result<Staged> install_into(const std::string& stage, const Request& request,
                            const EnvSources& sources, const HostSettings& settings,
                            std::vector<ProxyConnection>* connections) {
  using Clock = std::chrono::steady_clock;
  auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(sources.timeout_s * 1000));
  Staged staged;
  if (!request.python.empty()) {
    const std::string report = stage + "/.pip-report.json";
    if (Status ok =
            pip_install(sources, settings, stage, report, request.python, deadline, connections);
        !ok) {
      return std::move(ok).error();
    }
    staged.python = python_installed(report);
    fs::remove(report);
  }
  if (!request.r.empty()) {
    if (Status ok = install_r(stage, request.r, sources, settings, deadline, staged.r); !ok) {
      return std::move(ok).error();
    }
  }
  return staged;
}

// The paths a worker puts first on its import path for this generation.
Json activation(const std::string& dir, const std::string& name, int generation) {
  std::string site = python_site_dir(dir);
  std::string r_library = dir + "/r-library";
  return Json{{"name", name},
              {"generation", generation},
              {"python_path", site.empty() ? Json() : Json(site)},
              {"r_library", fs::is_directory(r_library) ? Json(r_library) : Json()}};
}

// Makes `name` (empty: none) the workspace's active environment. The
// activation is kept beside the name: a kernel of the workspace puts its
// python_path on sys.path before its first cell (a restart, a new kernel,
// a standby swapped in), without a cell calling env.use again.
Json set_active(Json& state, const EnvLibrary& library, const std::string& name) {
  if (name.empty()) {
    state["active"] = nullptr;
    state["active_paths"] = nullptr;
    return Json{{"name", nullptr}, {"python_path", nullptr}, {"r_library", nullptr}};
  }
  int generation = state["envs"][name].value("generation", 0);
  Json paths = activation(library.generation_dir(name, generation), name, generation);
  state["active"] = name;
  state["active_paths"] = paths;
  return paths;
}

Json install_record(const Request& request, const Staged& staged, const EnvSources& sources,
                    const CallContext& context, int generation) {
  Json packages = Json::array();
  for (const auto& p : request.python) packages.push_back(p);
  for (const auto& r : request.r) packages.push_back(std::string(kRPrefix) + r);
  return Json{{"at", utc_timestamp()},
              {"generation", generation},
              {"packages", packages},
              {"installed", {{"python", staged.python}, {"r", staged.r}}},
              {"source", sources.describe()},
              {"decision_id",
               context.permission_decision_id ? Json(*context.permission_decision_id) : Json()},
              {"decided_by", context.decided_by}};
}

Result<EnvLibrary> open_library(HostDispatcher& host, const CallContext& context) {
  auto workspace = host.workspace(context.frame_id);
  if (!workspace) return std::move(workspace).error();
  return EnvLibrary::open(host.data_dir(), workspace.value());
}

}  // namespace

Result<Json> env_setup(HostDispatcher& host, const Json& args, const CallContext& context) {
  auto request = parse_request(spec_of(args));
  if (!request) return soft("env_setup", request.error().message);
  auto sources = env_sources_from(context.settings.env_install);
  if (!sources) return soft("env_setup", sources.error().message);
  if (Status ok = check_url_sources(*sources, context.settings); !ok) {
    return soft("env_setup", ok.error().message);
  }
  auto library = open_library(host, context);
  if (!library) return soft("env_setup", library.error().message);
  Json state = library->state();
  Json env = state["envs"].value(request->name, Json::object());
  int current = env.value("generation", 0);
  auto stage = library->stage(current ? library->generation_dir(request->name, current) : "");
  if (!stage) return soft("env_setup", stage.error().message);
  bool published = false;
  ScopeExit cleanup([&] {
    std::error_code ec;
    if (!published) fs::remove_all(*stage, ec);
  });
  std::vector<ProxyConnection> connections;
  auto staged = install_into(*stage, *request, *sources, context.settings, &connections);
  audit_connections(host, context, connections);
  const std::string unchanged = "; the environment '" + request->name + "' is unchanged";
  if (!staged) {
    Json failed = soft("env_setup", staged.error().message + "\n(sources: " + sources->describe() +
                                        ")" + unchanged);
    if (!connections.empty()) failed["network"] = network_record(connections);
    if (std::string refused = refused_connections(connections); !refused.empty()) {
      failed["error"] = failed["error"].get<std::string>() + "\n" + refused;
    }
    return failed;
  }
  std::uint64_t bytes = tree_bytes(*stage);
  if (bytes > sources->max_bytes) {
    return soft("env_setup", "the environment would take " + std::to_string(bytes) +
                                 " bytes, over its budget of " +
                                 std::to_string(sources->max_bytes) + " (OPENAI4S_ENV_MAX_BYTES)" +
                                 unchanged);
  }
  int generation = current + 1;
  if (Status ok = library->publish(*stage, request->name, generation); !ok) {
    return soft("env_setup", ok.error().message + unchanged);
  }
  published = true;
  Json record = install_record(*request, *staged, *sources, context, generation);
  env["generation"] = generation;
  for (const char* language : {"python", "r"}) {
    Json merged = env.value(language, Json::object());
    merged.update(record["installed"][language]);
    env[language] = merged;
  }
  env["installs"].push_back(record);
  state["envs"][request->name] = env;
  Json result = set_active(state, *library, request->name);
  if (Status ok = library->save(state); !ok) return soft("env_setup", ok.error().message);
  result["ok"] = true;
  result["installed"] = record["installed"];
  result["source"] = record["source"];
  if (!connections.empty()) result["network"] = network_record(connections);
  return result;
}

Result<Json> env_list(HostDispatcher& host, const Json& args, const CallContext& context) {
  auto library = open_library(host, context);
  if (!library) return soft("env_list", library.error().message);
  Json state = library->state();
  Json environments = Json::array();
  for (const auto& [name, env] : state["envs"].items()) {
    int generation = env.value("generation", 0);
    Json row = activation(library->generation_dir(name, generation), name, generation);
    row["active"] = state["active"] == name;
    row["python"] = env.value("python", Json::object());
    row["r"] = env.value("r", Json::object());
    row["installs"] = env.value("installs", Json::array());
    environments.push_back(row);
  }
  (void)args;
  return Json{{"active", state["active"]}, {"environments", environments}};
}

Result<Json> env_use(HostDispatcher& host, const Json& args, const CallContext& context) {
  Json spec = spec_of(args);
  std::string name = spec.value("name", Json()).is_string() ? spec["name"].get<std::string>() : "";
  auto library = open_library(host, context);
  if (!library) return soft("env_use", library.error().message);
  Json state = library->state();
  // "system" (or no name) leaves every environment: the interpreter's own
  // packages only.
  if (name == "system") name.clear();
  if (!name.empty() && !state["envs"].contains(name)) {
    return soft("env_use", "no environment named '" + name + "' (host.env.list() shows them)");
  }
  Json result = set_active(state, *library, name);
  if (Status ok = library->save(state); !ok) return soft("env_use", ok.error().message);
  return result;
}

Result<Json> env_lock(HostDispatcher& host, const Json& args, const CallContext& context) {
  Json spec = spec_of(args);
  auto library = open_library(host, context);
  if (!library) return soft("env_lock", library.error().message);
  Json state = library->state();
  Json name = spec.value("name", Json());
  if (!name.is_string()) name = state["active"];
  if (!name.is_string() || !state["envs"].contains(name.get<std::string>())) {
    return soft("env_lock", "no environment to lock (name one, or create one first)");
  }
  const Json& env = state["envs"][name.get<std::string>()];
  std::string requirements;
  Json python = env.value("python", Json::object());
  for (const auto& [package, facts] : python.items()) {
    requirements += package + "==" + facts.value("version", "");
    if (!facts.value("sha256", "").empty())
      requirements += " --hash=sha256:" + facts.value("sha256", "");
    requirements += "\n";
  }
  return Json{{"name", name},
              {"generation", env.value("generation", 0)},
              {"python", python},
              {"r", env.value("r", Json::object())},
              {"requirements", requirements}};
}

}  // namespace o4s::host
