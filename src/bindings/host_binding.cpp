#include "bindings/host_binding.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings/json_py.h"
#include "bindings/native_route.h"
#include "bindings/py_error.h"
#include "host/dispatcher.h"
#include "host/env_library.h"
#include "host/env_sources.h"
#include "host/host_methods.h"
#include "host/outside_sandbox_hint.h"
#include "store/store.h"

namespace o4s::bindings {

namespace {

using host::HostDispatcher;
using store::Store;

std::optional<std::string> optional_string(const py::object& value) {
  if (value.is_none()) return std::nullopt;
  return py::str(value).cast<std::string>();
}

template <typename F>
auto released(F&& fn) -> decltype(fn()) {
  py::gil_scoped_release nogil;
  return fn();
}

// A handler's hard failure becomes the exception the spec names, so the
// cell reads e.g. "host.save_artifact error: no such file: x.csv".
[[noreturn]] void raise_handler_error(const Error& error) {
  if (error.cause || error.code == ErrorCode::kCancelled) raise_error(error);
  PyObject* type = PyExc_RuntimeError;
  switch (host::handler_error_kind(error)) {
    case host::HandlerErrorKind::kValue:
      type = PyExc_ValueError;
      break;
    case host::HandlerErrorKind::kKey:
      type = PyExc_KeyError;
      break;
    case host::HandlerErrorKind::kFileNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case host::HandlerErrorKind::kRuntime:
      break;
  }
  PyErr_SetString(type, error.message.c_str());
  throw py::error_already_set();
}

std::shared_ptr<Store> open_store(const std::string& path) {
  auto store = released([&] { return Store::open(path); });
  return unwrap(std::move(store));
}

void register_store(py::module_& m) {
  py::class_<Store, std::shared_ptr<Store>>(m, "Store")
      .def_static("open", &open_store, py::arg("path"))
      .def_property_readonly("path", &Store::path)
      .def_property_readonly("schema_version", &Store::schema_version)
      .def(
          "new_frame",
          [](Store& self, py::object parent_id, std::string project_id, std::string kind,
             py::object name, py::object model, int depth, std::string status) {
            store::NewFrame frame;
            frame.parent_id = optional_string(parent_id);
            frame.project_id = std::move(project_id);
            frame.kind = std::move(kind);
            frame.name = optional_string(name);
            frame.model = optional_string(model);
            frame.depth = depth;
            frame.status = std::move(status);
            return unwrap(released([&] { return self.new_frame(frame); }));
          },
          py::kw_only(), py::arg("parent_id") = py::none(), py::arg("project_id") = "default",
          py::arg("kind") = "turn", py::arg("name") = py::none(), py::arg("model") = py::none(),
          py::arg("depth") = 0, py::arg("status") = "processing")
      .def("get_frame",
           [](Store& self, const std::string& frame_id) {
             auto frame = unwrap(released([&] { return self.get_frame(frame_id); }));
             return frame ? to_python(*frame) : py::none();
           })
      .def(
          "resolve_frame_scope",
          [](Store& self, py::object frame_id, const std::string& fallback_project) {
            auto scope = unwrap(released([&] {
              return self.resolve_frame_scope(optional_string(frame_id), fallback_project);
            }));
            py::dict out;
            out["frame_id"] = scope.frame_id;
            out["root_frame_id"] = scope.root_frame_id;
            out["project_id"] = scope.project_id;
            return out;
          },
          py::arg("frame_id"), py::arg("fallback_project") = "default")
      .def(
          "set_permission_rule",
          [](Store& self, const std::string& scope, const std::string& scope_id,
             const std::string& tool, const std::string& pattern, const std::string& decision) {
            return unwrap(released([&] {
              return self.set_permission_rule(scope, scope_id, tool, pattern, decision);
            }));
          },
          py::kw_only(), py::arg("scope"), py::arg("scope_id") = "", py::arg("tool"),
          py::arg("pattern") = "*", py::arg("decision"))
      .def("delete_permission_rule",
           [](Store& self, const std::string& rule_id) {
             unwrap(released([&] { return self.delete_permission_rule(rule_id); }));
           })
      .def(
          "seed_default_permission_rules",
          [](Store& self, bool force) {
            unwrap(released(
                [&] { return self.seed_default_permission_rules(host::default_rules(), force); }));
          },
          py::arg("force") = false)
      .def(
          "log_host_call",
          [](Store& self, const std::string& method, py::object args, bool ok, py::object frame_id,
             py::object result) {
            store::HostCallRecord record;
            record.method = method;
            record.args = to_json(args);
            record.ok = ok;
            record.frame_id = optional_string(frame_id);
            record.result = to_json(result);
            unwrap(released([&] { return self.log_host_call(record); }));
          },
          py::kw_only(), py::arg("method"), py::arg("args"), py::arg("ok"),
          py::arg("frame_id") = py::none(), py::arg("result") = py::none());
}

host::CallContext make_context(py::object frame_id, py::object generation,
                               py::object action_context, py::object authorize,
                               py::object approve = py::none()) {
  host::CallContext context;
  context.settings = current_settings();
  if (!approve.is_none()) context.approver = python_approver(std::move(approve));
  context.frame_id = optional_string(frame_id);
  context.bash_generation = optional_string(generation);
  if (!action_context.is_none()) context.action_context = to_json(action_context);
  if (!authorize.is_none()) {
    // Resolved on the Python object at call time by the caller; here it is
    // just a callable. It runs with the GIL re-taken.
    auto callable = std::make_shared<py::object>(std::move(authorize));
    context.authorize_override = [callable](const host::Json& spec) -> Result<host::Json> {
      py::gil_scoped_acquire gil;
      try {
        return to_json((*callable)(to_python(spec)));
      } catch (py::error_already_set& error) {
        return capture_python_error(error);
      }
    };
  }
  return context;
}

void register_dispatcher(py::module_& m) {
  py::class_<HostDispatcher, std::shared_ptr<HostDispatcher>>(m, "HostDispatcher")
      .def(py::init([](std::shared_ptr<Store> store, py::object workspace, std::string data_dir,
                       std::string artifacts_dir) {
             host::DispatcherConfig config;
             config.store = std::move(store);
             config.workspace = optional_string(workspace);
             config.data_dir = std::move(data_dir);
             config.artifacts_dir = std::move(artifacts_dir);
             return std::make_shared<HostDispatcher>(std::move(config));
           }),
           py::arg("store"), py::kw_only(), py::arg("workspace"), py::arg("data_dir"),
           py::arg("artifacts_dir"))
      .def(
          "call",
          [](HostDispatcher& self, const std::string& method, py::object args, py::object frame_id,
             py::object generation, py::object action_context, py::object authorize,
             py::object approve) {
            host::Json json_args = to_json(args);
            host::CallContext context =
                make_context(frame_id, generation, action_context, authorize, approve);
            context.background = calling_background();
            auto result = released([&] { return self.call(method, json_args, context); });
            if (!result) raise_handler_error(result.error());
            return to_python(result.value());
          },
          py::arg("method"), py::arg("args"), py::kw_only(), py::arg("frame_id") = py::none(),
          py::arg("generation") = py::none(), py::arg("action_context") = py::none(),
          py::arg("authorize") = py::none(), py::arg("approve") = py::none())
      .def(
          "authorize",
          [](HostDispatcher& self, py::object spec, py::object frame_id, py::object generation) {
            host::Json json_spec = to_json(spec);
            host::CallContext context = make_context(frame_id, generation, py::none(), py::none());
            return to_python(released([&] { return self.authorize_bash(json_spec, context); }));
          },
          py::arg("spec"), py::kw_only(), py::arg("frame_id") = py::none(),
          py::arg("generation") = py::none())
      .def(
          "consume",
          [](HostDispatcher& self, py::object spec, py::object generation) {
            host::Json json_spec = to_json(spec);
            auto trusted = optional_string(generation);
            return to_python(released([&] { return self.consume_bash(json_spec, trusted); }));
          },
          py::arg("spec"), py::kw_only(), py::arg("generation") = py::none())
      .def(
          "record_result",
          [](HostDispatcher& self, py::object spec, py::object generation) {
            host::Json json_spec = to_json(spec);
            auto trusted = optional_string(generation);
            return to_python(released([&] { return self.record_bash(json_spec, trusted); }));
          },
          py::arg("spec"), py::kw_only(), py::arg("generation") = py::none())
      .def("revoke_generation",
           [](HostDispatcher& self, const std::string& generation) {
             self.revoke_bash_generation(generation);
           })
      .def("set_workspace",
           [](HostDispatcher& self, py::object workspace) {
             self.set_workspace(optional_string(workspace));
           })
      .def(
          "workspace",
          [](HostDispatcher& self, py::object frame_id) {
            return unwrap(released([&] { return self.workspace(optional_string(frame_id)); }));
          },
          py::arg("frame_id") = py::none())
      .def(
          "env_library",
          [](HostDispatcher& self, py::object frame_id) {
            return unwrap(released([&]() -> Result<std::string> {
              auto workspace = self.workspace(optional_string(frame_id));
              if (!workspace) return std::move(workspace).error();
              return host::ensure_env_library(self.data_dir(), workspace.value());
            }));
          },
          py::arg("frame_id") = py::none());
}

}  // namespace

host::HostSettings current_settings() {
  py::object environ = py::module_::import("os").attr("environ");
  auto get = [&](const char* name, const char* fallback) {
    return py::str(environ.attr("get")(name, fallback)).cast<std::string>();
  };
  host::HostSettings settings;
  settings.unattended_approval = get("OPENAI4S_UNATTENDED_APPROVAL", "deny");
  settings.egress_mode = get("OPENAI4S_EGRESS", "");
  settings.egress_allow = get("OPENAI4S_EGRESS_ALLOW", "");
  settings.egress_allow_private = get("OPENAI4S_EGRESS_ALLOW_PRIVATE", "");
  settings.bash_allowed_roots = get("OPENAI4S_BASH_ALLOWED_ROOTS", "");
  settings.artifact_max_bytes = get("OPENAI4S_ARTIFACT_MAX_BYTES", "");
  settings.artifact_quota_bytes = get("OPENAI4S_ARTIFACT_QUOTA_BYTES", "");
  for (std::string_view name : host::kEnvInstallVariables) {
    std::string key(name);
    settings.env_install[key] = get(key.c_str(), "");
  }
  return settings;
}

// "conversation" when it is not among request["choices"] counts as "once"
// (the gate enforces it).
host::Approver python_approver(py::object approve) {
  auto callable = std::make_shared<py::object>(std::move(approve));
  return [callable](const host::ApprovalRequest& request) {
    py::gil_scoped_acquire gil;
    try {
      py::dict info;
      info["decision_id"] = request.decision_id;
      info["tool"] = request.tool;
      info["target"] = request.target;
      info["frame_id"] = request.frame_id;
      // What to show: escaped, visibly cut, and the answers that count.
      info["prompt"] = request.text.prompt;
      info["target_display"] = request.text.target_block;
      // The cell's own words for why (escaped onto one line); "" for none.
      info["reason_display"] = request.text.reason_block;
      info["target_whole"] = request.text.whole;
      info["target_length"] = request.text.length;
      info["target_sha256"] = request.text.sha256;
      py::list choices;
      choices.append("once");
      if (request.text.always_offered) choices.append("conversation");
      choices.append("deny");
      info["choices"] = choices;
      py::object answer = (*callable)(info);
      std::string text = py::isinstance<py::str>(answer) ? answer.cast<std::string>() : "";
      if (text == "once") return host::ApprovalAnswer::kOnce;
      if (text == "conversation") return host::ApprovalAnswer::kConversation;
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("openai4s approver");
    }
    return host::ApprovalAnswer::kDeny;
  };
}

void register_host(py::module_& m) {
  register_store(m);
  register_dispatcher(m);
  m.def("host_methods", [] {
    // The table the worker SDK is held against (tests/python/host).
    py::list rows;
    for (const host::HostMethod& method : host::host_methods()) {
      py::dict row;
      row["name"] = std::string(method.name);
      row["gate"] =
          method.gate.empty() ? py::object(py::none()) : py::str(std::string(method.gate));
      row["served"] = method.handler != nullptr;
      row["max_args"] = method.max_args;
      py::list defaults;
      for (const host::DefaultRule& rule : method.defaults) {
        defaults.append(py::make_tuple(std::string(rule.pattern), std::string(rule.decision)));
      }
      row["default_rules"] = defaults;
      rows.append(row);
    }
    return rows;
  });
  m.def(
      "outside_sandbox_hint",
      [](const std::string& error_text, const std::string& cwd) {
        return host::outside_sandbox_hint(error_text, cwd);
      },
      py::arg("error_text"), py::arg("cwd"),
      "One line when a sandboxed cell's error names a missing path that exists on the host.");
}

}  // namespace o4s::bindings
