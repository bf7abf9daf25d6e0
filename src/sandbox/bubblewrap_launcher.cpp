#include "sandbox/bubblewrap_launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/paths.h"
#include "base/pipe.h"
#include "sandbox/bwrap_mounts.h"
#include "sandbox/diagnosis.h"
#include "sandbox/resource_limits.h"
#include "sandbox/seccomp_policy.h"
#include "sandbox/system_layout.h"
#include "sandbox/workspace_path.h"

namespace o4s::sandbox {

namespace {

using std::chrono::milliseconds;
using Kind = FsOperation::Kind;

// bubblewrap reports its init within milliseconds; these bound a wedged
// launch (spec kernel.md §2.13: 5 s).
constexpr milliseconds kInfoTimeout(5000);
constexpr milliseconds kPinTimeout(5000);

// Where the worker's temporary files go inside the sandbox.
constexpr const char* kPrivateTmp = "/tmp";
constexpr const char* kMatplotlibDir = "/tmp/openai4s-matplotlib";

// The operating system's directories, which the sandbox shows read-only: a
// workspace may be none of them, contain none, and lie under none (a
// writable hole in them, as an /etc/profile.d handed to the sandbox uid,
// would be a root login shell's script directory).
constexpr const char* kReadOnlySystemDirectories[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot"};
// Directories a workspace may not be or contain, though one may lie under
// them: the system's state (/var) and root's home, whose dotfiles
// (.bashrc, .profile) run as root.
constexpr const char* kNotToContain[] = {"/var", "/root"};
// Virtual filesystems: no workspace under them.
constexpr const char* kVirtualDirectories[] = {"/proc", "/sys", "/dev"};

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Lexical normalisation of an absolute path: "//", "." and ".." removed.
std::string normalise(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t stop = path.find('/', start);
    if (stop == std::string::npos) stop = path.size();
    std::string part = path.substr(start, stop - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    start = stop + 1;
  }
  std::string out;
  for (const auto& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string parent_of_path(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

std::optional<std::string> env_value(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

// The worker's temporary directory variables, pointed at the private /tmp;
// MPLCONFIGDIR keeps the environment builder's name for it.
std::vector<std::string> sandbox_environment(std::vector<std::string> env) {
  const std::vector<std::pair<std::string, std::string>> overrides = {
      {"TMPDIR", kPrivateTmp},
      {"TMP", kPrivateTmp},
      {"TEMP", kPrivateTmp},
      {"MPLCONFIGDIR", kMatplotlibDir}};
  for (const auto& [name, value] : overrides) {
    std::erase_if(env, [&](const std::string& entry) {
      return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
             entry[name.size()] == '=';
    });
    env.push_back(name + "=" + value);
  }
  return env;
}

class BubblewrapLaunch final : public PreparedLaunch {
 public:
  BubblewrapLaunch(BubblewrapLauncher& launcher, proc::SpawnRequest request, PipePair info,
                   UniqueFd seccomp, std::vector<UniqueFd> sources, SelfTestExpectations expect)
      : launcher_(launcher),
        request_(std::move(request)),
        info_(std::move(info)),
        seccomp_(std::move(seccomp)),
        sources_(std::move(sources)),
        expect_(std::move(expect)) {}

  const proc::SpawnRequest& request() const override { return request_; }

  Result<LaunchOutcome> finish(const SpawnedLauncher& spawned) override {
    // Our copies must go, or a bwrap that died early would never show as
    // end of stream on the info pipe.
    info_.write.reset();
    seccomp_.reset();
    sources_.clear();
    auto init = read_info_child_pid(info_.read.get(), kInfoTimeout);
    if (!init) return failure(spawned, std::move(init).error());
    auto pinned = pin_worker(spawned.pid, init.value(), kPinTimeout);
    if (!pinned) return failure(spawned, std::move(pinned).error());
    PinnedWorker worker = std::move(pinned.value());

    // A dropped identity got its rlimits before it left root (see prepare):
    // the daemon may lack CAP_SYS_RESOURCE (a container) and then cannot
    // prlimit another uid's process.
    const ResourceLimits none;
    const ResourceLimits& to_apply = expect_.identity.dropped ? none : launcher_.settings().limits;
    if (Status limited = apply_limits(worker.worker_pid, to_apply); !limited) {
      return denied("the worker's resource limits could not be set: " + limited.error().message);
    }
    LaunchOutcome outcome;
    // Every process of the sandbox: bubblewrap outside, its PID 1, the
    // worker; what they start later is born inside.
    // No RLIMIT_NPROC binds host root, nor a shared dropped identity (see
    // prepare).
    const SandboxIdentity& who = expect_.identity;
    outcome.envelope = launcher_.enter_envelope({spawned.pid, worker.init_pid, worker.worker_pid},
                                                who.uid == 0 || (who.dropped && !who.own_uid));
    outcome.process_limit = outcome.envelope.processes;
    SelfTestReport report = run_self_test(worker, expect_);
    if (!report.passed()) {
      // enforce never runs an unproven sandbox; auto may run one whose only
      // gap is host root, and says so loudly.
      const bool degrade =
          launcher_.settings().mode == SandboxMode::kAuto && report.only_degradable_failures();
      if (!degrade) return denied("the sandbox self-test failed: " + report.failures());
      outcome.degraded = report.failures();
    }
    outcome.identity = expect_.identity;
    outcome.self_test = std::move(report);
    outcome.pin = std::move(worker);
    return outcome;
  }

 private:
  static Error denied(std::string message) {
    return make_error(ErrorCode::kSandboxUnavailable, std::move(message));
  }

  // A launch that went wrong says what bubblewrap said, diagnosed.
  Error failure(const SpawnedLauncher& spawned, Error error) {
    std::string text = spawned.stderr_after_exit ? spawned.stderr_after_exit() : std::string();
    if (text.find("bwrap") != std::string::npos) {
      Diagnosis diagnosis = diagnose_bwrap_failure(text, -1, read_host_facts());
      return denied("the kernel sandbox could not start: " + diagnosis.message);
    }
    return denied("the kernel sandbox could not start: " + error.message);
  }

  BubblewrapLauncher& launcher_;
  proc::SpawnRequest request_;
  PipePair info_;
  UniqueFd seccomp_;
  std::vector<UniqueFd> sources_;  // bind sources, passed to bubblewrap
  SelfTestExpectations expect_;
};

// The kernel's global knobs under /proc, read-only inside (bubblewrap covers
// some of them only when it runs as root, and none as another uid). The
// sources are the host's own procfs: /proc/sys resolves per-namespace
// entries (net.*) by the namespaces of the process that opens them, so the
// sandbox still sees its own network namespace there.
constexpr const char* kReadOnlyProcDirs[] = {"/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs"};
// Files that leak kernel memory, keys or timers, or identify the host (its
// boot command line, its kernel's build configuration), masked with
// /dev/null whenever the sandbox's ids could open them (as /etc's secrets:
// a root-only kpage* is already shut to any other uid by its mode); and the
// memory of bubblewrap's init, PID 1 inside: it runs as the worker's uid, so
// without the mask a cell could rewrite it through /proc/1/mem.
constexpr const char* kMaskedProcFiles[] = {
    "/proc/kcore",         "/proc/keys",       "/proc/timer_list",
    "/proc/kpagecount",    "/proc/kpageflags", "/proc/kpagecgroup",
    "/proc/sysrq-trigger", "/proc/cmdline",    "/proc/config.gz"};
constexpr const char* kInitMemory[] = {"/proc/1/mem", "/proc/1/task/1/mem"};

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void add_proc_hardening(BwrapCommand& command, const HostReader& reader) {
  // bubblewrap would fail on a missing source or mask target; this host's
  // procfs has the same entries as the sandbox's.
  for (const char* dir : kReadOnlyProcDirs) {
    if (is_directory(dir)) command.add({Kind::kReadOnlyBind, dir, dir, std::nullopt});
  }
  for (const char* file : kMaskedProcFiles) {
    struct stat st {};
    if (::lstat(file, &st) != 0) continue;
    // procfs keeps no ACLs; its modes and owner are the whole check.
    SecretEntry entry{{Kind::kMaskFile, "", file, std::nullopt}, st.st_uid, st.st_gid, false};
    const bool others_may_open = (st.st_mode & (S_IROTH | S_IWOTH)) != 0;
    if (others_may_open || may_read(entry, reader)) command.add(entry.mask);
  }
  for (const char* file : kInitMemory) command.add({Kind::kMaskFile, "", file, std::nullopt});
}

}  // namespace

BwrapCommand isolation_command(const std::string& bwrap_path, const SandboxSettings& settings,
                               const HostReader& reader) {
  BwrapCommand command(bwrap_path);
  command.die_with_parent()
      .unshare(Namespace::kUser)
      .unshare(Namespace::kPid)
      .unshare(Namespace::kIpc)
      .unshare(Namespace::kUts);
  if (!settings.allow_raw_network) command.unshare(Namespace::kNet);
  // Its own UTS namespace alone would still show the host's name, copied.
  command.hostname(kSandboxHostname);
  command.drop_all_capabilities().disable_nested_user_namespaces();
  const SystemLayout& layout = system_layout();
  for (const auto& op : layout.operations) command.add(op);
  for (const auto& mask : masks_for(layout, reader)) command.add(mask);
  // The host's name, as /etc shows it, goes with the UTS namespace's.
  if (exists("/etc/hostname")) command.add({Kind::kMaskFile, "", "/etc/hostname", std::nullopt});
  command.add({Kind::kDev, "", "/dev", std::nullopt});
  command.add({Kind::kProc, "", "/proc", std::nullopt});
  add_proc_hardening(command, reader);
  command.add({Kind::kTmpfs, "", kPrivateTmp, settings.tmpfs_bytes});
  command.add({Kind::kTmpfs, "", "/dev/shm", settings.tmpfs_bytes});
  // Writes anywhere but the workspace and the private tmpfs mounts fail.
  command.remount_read_only("/dev").remount_read_only("/");
  if (settings.allow_raw_network) {
    // With the host network the resolver configuration must resolve too; it
    // is commonly a symlink into /run, which the layout leaves out.
    auto resolver = real_path("/etc/resolv.conf");
    if (resolver && !path_contains("/etc", *resolver) && !path_contains("/usr", *resolver)) {
      command.add({Kind::kReadOnlyBind, *resolver, *resolver, std::nullopt});
    }
  }
  return command;
}

Status check_workspace(const std::string& workspace) {
  auto refuse = [&](const std::string& why) {
    return make_error(ErrorCode::kSandboxUnavailable,
                      "the workspace " + workspace + " cannot be sandboxed: " + why);
  };
  if (!is_normal_absolute_path(workspace)) return refuse("it is not an absolute path");
  if (workspace == "/") return refuse("it is the filesystem root");
  auto contains = [&](const char* system) { return path_contains(workspace, system); };
  auto under = [&](const char* system) { return path_contains(system, workspace); };
  for (const char* system : kReadOnlySystemDirectories) {
    if (contains(system)) return refuse(std::string("it contains ") + system);
  }
  for (const char* system : kNotToContain) {
    if (contains(system)) return refuse(std::string("it contains ") + system);
  }
  for (const char* system : kReadOnlySystemDirectories) {
    if (under(system)) return refuse(std::string("it is under ") + system);
  }
  for (const char* virtual_fs : kVirtualDirectories) {
    if (under(virtual_fs)) return refuse(std::string("it is under ") + virtual_fs);
  }
  if (!is_directory(workspace)) return refuse("it is not a directory");
  return {};
}

namespace {

// Top-level directories that hold far more than one runtime: bound
// read-only, any of them would show the sandbox everything in it (other
// users' homes, every temp file of the host).
bool shared_top_level(const std::string& root) {
  static const char* const kShared[] = {"/tmp", "/var",   "/run",       "/home", "/root",
                                        "/mnt", "/media", "/srv",       "/dev",  "/proc",
                                        "/sys", "/boot",  "/lost+found"};
  for (const char* shared : kShared) {
    if (root == shared) return true;
  }
  return false;
}

// What an interpreter's prefix holds: a venv's marker, or a stdlib.
bool looks_like_a_python_prefix(const std::string& prefix) {
  if (exists(prefix + "/pyvenv.cfg")) return true;
  DIR* lib = ::opendir((prefix + "/lib").c_str());
  if (lib == nullptr) return false;
  bool found = false;
  while (dirent* entry = ::readdir(lib)) {
    if (std::strncmp(entry->d_name, "python3", 7) == 0) found = true;
  }
  ::closedir(lib);
  return found;
}

bool acceptable_root(const std::string& root) {
  if (root == "/" || shared_top_level(root)) return false;
  if (root == "/usr" || root.find('/', 1) != std::string::npos) return true;
  // Another top-level directory (/venv, /opt): only a whole interpreter.
  return looks_like_a_python_prefix(root);
}

// An interpreter's install prefix: the grandparent of the file (prefix/bin/
// python), else its directory, else the file alone, whichever is the first
// that is acceptable. A symbolic link elsewhere (~/bin/python ->
// /usr/bin/python3) says nothing about the directories it sits in: its
// prefix counts only when it is a venv, otherwise the link alone is bound.
std::string runtime_root_of_file(const std::string& file, bool is_link) {
  std::string directory = parent_of_path(file);
  std::string prefix = parent_of_path(directory);
  if (is_link) return exists(prefix + "/pyvenv.cfg") && acceptable_root(prefix) ? prefix : file;
  if (acceptable_root(prefix)) return prefix;
  if (acceptable_root(directory)) return directory;
  return file;
}

}  // namespace

bool shown_by_another_root(const std::string& root, const std::vector<std::string>& roots,
                           const std::vector<std::string>& writable) {
  // Inside a writable bind the root's own read-only bind is what keeps it
  // read-only; and a path through a symbolic link may lead elsewhere inside.
  for (const auto& bind : writable) {
    if (path_contains(bind, root)) return false;
  }
  auto resolved = real_path(root);
  if (!resolved || *resolved != root) return false;
  return std::any_of(roots.begin(), roots.end(), [&](const std::string& other) {
    return other != root && path_contains(other, root);
  });
}

std::vector<std::string> runtime_roots(const std::vector<std::string>& paths) {
  std::vector<std::string> roots;
  auto add = [&](const std::string& root) {
    if (root == "/" || !is_normal_absolute_path(root)) return;
    if (std::find(roots.begin(), roots.end(), root) == roots.end()) roots.push_back(root);
  };
  for (const auto& path : paths) {
    if (path.empty() || path.front() != '/') continue;
    auto resolved = real_path(path);
    if (!resolved) continue;
    std::string lexical = normalise(path);
    if (is_directory(*resolved)) {
      add(*resolved);
      add(lexical);
    } else {
      add(runtime_root_of_file(lexical, lexical != *resolved));
      add(runtime_root_of_file(*resolved, false));
    }
  }
  return roots;
}

BubblewrapLauncher::BubblewrapLauncher(std::string bwrap_path, SandboxSettings settings,
                                       IdentityPlan identity)
    : bwrap_path_(std::move(bwrap_path)),
      settings_(std::move(settings)),
      identity_(std::move(identity)) {}

Result<SandboxIdentity> BubblewrapLauncher::sandbox_identity(const std::string& workspace) {
  if (::getuid() == 0 && !identity_.drops_root) {
    // The probe found no way out of root; the self-test then says so.
    SandboxIdentity as_root;
    as_root.chosen_by = "none: " + identity_.problem;
    as_root.shared = "host root: " + identity_.problem;
    return as_root;
  }
  std::optional<std::uint32_t> own;
  if (::getuid() == 0 && !settings_.sandbox_uid) {
    std::lock_guard lock(lease_mutex_);
    if (!lease_) {
      // Uids an earlier kernel of this workspace ran as come first: the
      // files it left stay writable to this one.
      auto leased = UidLease::acquire(settings_.uid_run_directory, settings_.uid_range,
                                      acl_user_ids(workspace));
      if (!leased) {
        return make_error(ErrorCode::kSandboxUnavailable,
                          "no host uid could be leased for the sandbox: " + leased.error().message +
                              " (set OPENAI4S_SANDBOX_RUN_DIR to a directory only root may "
                              "write, or OPENAI4S_SANDBOX_UID to run every kernel as one "
                              "fixed, shared uid)");
      }
      lease_.emplace(std::move(leased.value()));
    }
    own = lease_->uid();
  }
  return choose_identity(settings_, ::getuid(), ::getgid(), own);
}

EnvelopeReport BubblewrapLauncher::enter_envelope(const std::vector<pid_t>& pids, bool root_uid) {
  const ResourceLimits& limits = settings_.limits;
  std::lock_guard lock(cgroup_mutex_);
  if (!cgroup_tried_) {
    cgroup_tried_ = true;
    std::map<std::string, std::string> missing;
    auto bases = SandboxCgroup::bases_for_this_process(missing);
    EnvelopeLimits wanted{limits.address_space_bytes, limits.processes, limits.cpu_seconds};
    auto created = SandboxCgroup::create(wanted, bases, SandboxCgroup::next_name());
    if (created) {
      cgroup_ = std::move(created.value());
    } else {
      cgroup_error_ = created.error().message;
    }
  }
  EnvelopeMechanisms cgroups;
  if (cgroup_) {
    Status attached;
    for (pid_t pid : pids) {
      if (attached) attached = cgroup_->attach(pid);
    }
    if (attached) {
      cgroup_->begin_generation();
      cgroups = cgroup_->mechanisms();
    } else {
      cgroup_error_ = attached.error().message;
    }
  }
  auto combine = [&](const std::string& cgroup, const std::string& rlimit) {
    if (cgroup.empty())
      return rlimit + " (no cgroup: " + (cgroup_error_.empty() ? "unavailable" : cgroup_error_) +
             ")";
    return cgroup + ", and " + rlimit;
  };
  EnvelopeReport report;
  report.memory =
      limits.address_space_bytes ? combine(cgroups.memory, "RLIMIT_AS per process") : "unlimited";
  report.memory_includes_tmpfs = !cgroups.memory.empty();
  report.cpu = limits.cpu_seconds ? combine(cgroups.cpu, "RLIMIT_CPU per process") : "unlimited";
  if (!limits.processes) {
    report.processes = "unlimited";
  } else if (root_uid && cgroups.processes.empty()) {
    report.processes =
        "none: RLIMIT_NPROC does not bind the root user and no pids cgroup is available (" +
        cgroup_error_ + ")";
  } else if (root_uid) {
    report.processes = cgroups.processes;
  } else {
    report.processes = combine(cgroups.processes, "RLIMIT_NPROC in the sandbox's user namespace");
  }
  return report;
}

std::optional<std::string> BubblewrapLauncher::limit_hit() const {
  std::lock_guard lock(cgroup_mutex_);
  if (!cgroup_) return std::nullopt;
  return cgroup_->limit_hit();
}

void BubblewrapLauncher::retire() {
  {
    std::lock_guard lock(cgroup_mutex_);
    // A process the cell left running must not outlive the kernel: the
    // next kernel handed this uid would share it.
    if (cgroup_) cgroup_->kill_all();
    cgroup_.reset();
    cgroup_tried_ = false;
    cgroup_error_.clear();
  }
  std::lock_guard lock(lease_mutex_);
  lease_.reset();  // waits, bounded, for the uid's last processes
}

void BubblewrapLauncher::begin_generation() {
  std::lock_guard lock(cgroup_mutex_);
  if (cgroup_) cgroup_->begin_generation();
}

std::optional<std::uint64_t> BubblewrapLauncher::oom_kills() const {
  std::lock_guard lock(cgroup_mutex_);
  if (!cgroup_) return std::nullopt;
  return cgroup_->oom_kills();
}

namespace {

// Resolves, checks and holds the workspace open: the owner read, the grants
// and the bind then all act on the directory just checked, not on what the
// path names by then (a live cell of another kernel may swap one of its
// components).
Result<HeldPath> hold_workspace(const std::string& path) {
  // A root daemon's sandboxes all run as other uids: a symlink one of them
  // left is not followed to another kernel's workspace.
  auto workspace =
      resolve_workspace(path, ::geteuid() == 0 ? std::optional<uid_t>(0) : std::nullopt);
  if (!workspace) {
    if (workspace.error().code == ErrorCode::kSandboxUnavailable) return workspace.error();
    return make_error(ErrorCode::kSandboxUnavailable, "the workspace " + path + " does not exist");
  }
  if (Status ok = check_workspace(*workspace); !ok) return std::move(ok).error();
  return HeldPath::open(*workspace);
}

SelfTestExpectations expectations_for(const SandboxSettings& settings,
                                      const SandboxIdentity& identity,
                                      const std::string& workspace) {
  SelfTestExpectations expect;
  expect.identity = identity;
  expect.workspace = workspace;
  expect.network_isolated = !settings.allow_raw_network;
  expect.limits = settings.limits;
  // RLIMIT_NPROC counts the tasks of a uid: on a uid of the kernel's own it
  // bounds this sandbox alone (set before bubblewrap makes its user
  // namespace, it binds the namespace's owner too). On a shared uid it
  // would bound every sandbox of that uid together, so it is not set; the
  // pids cgroup bounds this sandbox's tasks instead.
  if (identity.dropped && !identity.own_uid) expect.limits.processes.reset();
  expect.read_only_paths = {"/", "/usr", "/etc"};
  return expect;
}

Status mount_filesystem(MountPlan& mounts, const LaunchSpec& spec, const SandboxSettings& settings,
                        const HeldPath& workspace) {
  std::vector<std::string> readable = runtime_roots(spec.runtime_paths);
  for (const auto& extra : settings.extra_read_paths) {
    if (auto resolved = real_path(extra)) readable.push_back(*resolved);
  }
  if (Status ok = mounts.bind_runtime(readable); !ok) return ok;
  if (Status ok = mounts.bind_workspace(workspace); !ok) return ok;
  if (Status ok = mounts.mask_hidden(spec.hidden_paths, settings.tmpfs_bytes); !ok) return ok;
  if (Status ok = mounts.bind_exchange_dirs(spec.host_exchange_dirs); !ok) return ok;
  mounts.mask_home(env_value(spec.request.env, "HOME"), settings.tmpfs_bytes);
  return mounts.identity_files(env_value(spec.request.env, "HOME"));
}

// The supervisor's child sets the per-process limits while still root, then
// leaves root for the sandbox uid, and only then execs bubblewrap:
// bubblewrap, its PID 1 and the worker all inherit both, and no helper
// program (setpriv, prlimit) costs an exec on every start.
void drop_to_identity(proc::SpawnRequest& request, const ResourceLimits& limits,
                      const SandboxIdentity& identity) {
  if (!identity.dropped) return;
  auto add = [&](int resource, const std::optional<std::uint64_t>& value) {
    if (value) request.limits.push_back({resource, *value});
  };
  add(RLIMIT_AS, limits.address_space_bytes);
  add(RLIMIT_CPU, limits.cpu_seconds);
  add(RLIMIT_FSIZE, limits.file_size_bytes);
  if (identity.own_uid) add(RLIMIT_NPROC, limits.processes);
  request.credentials = proc::ChildCredentials{identity.uid, identity.gid};
}

}  // namespace

Result<std::unique_ptr<PreparedLaunch>> BubblewrapLauncher::prepare(const LaunchSpec& spec) {
  auto held = hold_workspace(spec.workspace);
  if (!held) return std::move(held).error();
  const std::string workspace = held->path();
  auto chosen = sandbox_identity(held->stable(held->size() - 1));
  if (!chosen) return std::move(chosen).error();
  const SandboxIdentity identity = std::move(chosen.value());
  if (Status handed = hand_over_held_workspace(identity, *held); !handed) {
    return make_error(
        ErrorCode::kSandboxUnavailable,
        "the workspace could not be given to the sandbox uid: " + handed.error().message);
  }

  BwrapCommand command = isolation_command(bwrap_path_, settings_, host_reader_of(identity));
  SelfTestExpectations expect = expectations_for(settings_, identity, workspace);
  MountPlan mounts(command, expect, identity, workspace);
  if (Status ok = mount_filesystem(mounts, spec, settings_, *held); !ok) {
    return std::move(ok).error();
  }
  command.chdir(workspace);

  auto made = make_pipe();
  if (!made) return std::move(made).error();
  PipePair info_pipe = std::move(made.value());
  auto seccomp = seccomp_program_fd();
  if (!seccomp) {
    return make_error(ErrorCode::kSandboxUnavailable,
                      "the seccomp policy could not be built: " + seccomp.error().message);
  }
  command.info_fd(info_pipe.write.get()).seccomp_fd(seccomp->get());
  auto argv = command.build(spec.request.argv);
  if (!argv) {
    Error error = std::move(argv).error();
    error.code = ErrorCode::kSandboxUnavailable;
    return error;
  }

  proc::SpawnRequest request;
  request.argv = std::move(argv.value());
  drop_to_identity(request, settings_.limits, identity);
  request.env = sandbox_environment(spec.request.env);
  request.cwd = spec.request.cwd;
  std::vector<UniqueFd> sources = mounts.take_sources();
  request.pass_fds = {info_pipe.write.get(), seccomp->get()};
  for (const auto& fd : sources) request.pass_fds.push_back(fd.get());
  return std::unique_ptr<PreparedLaunch>(
      new BubblewrapLaunch(*this, std::move(request), std::move(info_pipe),
                           std::move(seccomp.value()), std::move(sources), std::move(expect)));
}

}  // namespace o4s::sandbox
