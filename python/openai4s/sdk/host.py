"""The ``host`` facade injected into a Cell's namespace.

Every member is a thin RPC over ``_call``, which encodes top-level keys of
dict arguments snake_case -> camelCase and drops ``None`` values; the host
decodes at its boundary. Analysis kernels get the same facade without the
control plane, whose members are then genuinely absent.
"""

import os

from openai4s.sdk import namespaces

HOST_CAPABILITY_VERSION = "2"
CONTROL_PLANE = frozenset(
    {
        "frames",
        "query",
        "mcp",
        "compute",
        "delegate",
        "children",
        "collect",
        "stop_child",
        "send_message",
        "delegation_stats",
    }
)
ANALYSIS_MODES = frozenset({"python", "analysis", "r", "R"})


def camel(key):
    if not isinstance(key, str) or "_" not in key:
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def encode_args(args) -> list:
    """camelCase the top-level keys of dict arguments and drop ``None`` values;
    nested values are left as they are."""
    encoded = []
    for arg in args:
        if isinstance(arg, dict):
            arg = {camel(key): value for key, value in arg.items() if value is not None}
        encoded.append(arg)
    return encoded


def _path(value):
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def _reject_system_role(messages) -> None:
    for message in messages or ():
        if isinstance(message, dict) and message.get("role") == "system":
            raise ValueError(
                "host.llm: 'system' role is not allowed; the system prompt is host-controlled"
            )


def _llm_item(request) -> dict:
    if isinstance(request, str):
        return {"messages": [{"role": "user", "content": request}]}
    if isinstance(request, dict):
        if "prompt" not in request and "messages" not in request:
            raise ValueError("host.llm dict needs 'prompt' or 'messages'")
        _reject_system_role(request.get("messages"))
        return dict(request)
    raise TypeError(f"host.llm expects a str, dict or list, not {type(request).__name__}")


class _Host:
    """Analysis surface; ``_ControlPlaneHost`` adds the control plane."""

    HOST_CAPABILITY_VERSION = HOST_CAPABILITY_VERSION

    def __init__(self, host_call, generation=None) -> None:
        self._host_call = host_call
        self._generation = generation
        self.skills = namespaces.Skills(self._call)
        self.lineage = namespaces.Lineage(self._call)
        self.endpoints = namespaces.Endpoints(self._call)
        self.credentials = namespaces.Credentials(self._call)
        self.env = namespaces.Env(self._call)
        self.app = namespaces.App(self._call)
        self.science = namespaces.Science(self._call)

    def __getattr__(self, name):
        if name in CONTROL_PLANE:
            raise AttributeError(
                f"'_Host' object has no attribute {name!r} (not available in this kernel)"
            )
        raise AttributeError(f"'_Host' object has no attribute {name!r}")

    def _call(self, method, args=None):
        return self._host_call(method, encode_args(args or []))

    def llm(self, request, *, max_tokens=1024, temperature=0.7, max_concurrency=None):
        options = {"max_tokens": max_tokens, "temperature": temperature}
        if isinstance(request, list):
            batch = [_llm_item(item) for item in request]
            spec = {"batch": batch, **options, "max_concurrency": max_concurrency}
        else:
            spec = {**_llm_item(request), **options}
        return self._call("llm", [spec])

    def artifacts(self, **filters):
        return self._call("artifacts", [filters])

    def artifact_path(self, version_id):
        return self._call("artifact_path", [version_id])

    def save_artifact(
        self,
        path,
        filename=None,
        *,
        content_type=None,
        input_version_ids=None,
        producing_cell_id=None,
        priority=0,
        source=None,
    ):
        spec = {
            "path": _path(path),
            "filename": filename,
            "content_type": content_type,
            "input_version_ids": list(input_version_ids or []),
            "producing_cell_id": producing_cell_id,
            "priority": priority,
            "source": source,
        }
        return self._call("save_artifact", [spec])

    def view_image(self, version_id=None, *, path=None):
        return self._call("view_image", [{"version_id": version_id, "path": _path(path)}])

    def artifact_marker(self, version_id):
        return self._call("artifact_marker", [version_id])

    def materialise_artifact(self, version_id, *, filename=None):
        return self._call(
            "materialise_artifact", [{"version_id": version_id, "filename": filename}]
        )

    def current_model(self):
        return self._call("current_model", [])

    def list_models(self):
        return self._call("list_models", [])

    def capabilities(self):
        return self._call("capabilities", [])

    def get_user_email(self):
        return self._call("get_user_email", [])

    def exec_background(self, code, *, origin="agent"):
        """Starts `code` in a worker of its own (same workspace, language and
        sandbox settings; not this namespace). Returns {"exec_id", "state"}
        at once. Asks for permission (unattended: needs an allow rule)."""
        return self._call("exec_background", [{"code": code, "origin": origin}])

    def exec_peek(self, exec_id):
        """The job's state, usage and output so far: its first 64 KiB and
        latest 192 KiB, a marker counting the bytes between."""
        return self._call("exec_peek", [exec_id])

    def exec_interrupt(self, exec_id):
        """Interrupts the job (KeyboardInterrupt in its code)."""
        return self._call("exec_interrupt", [exec_id])

    def exec_list(self):
        """This kernel's jobs: state, started_at, wall_s, cpu_s,
        peak_rss_bytes (no output). They end with its restart or shutdown."""
        return self._call("exec_list", [])

    def submit_output(
        self,
        output,
        completion_bullets,
        *,
        output_schema=None,
        task_status=None,
        source_files=None,
        entry_points=None,
        architecture_summary=None,
        test_evidence=None,
    ):
        spec = {
            "output": output,
            "completion_bullets": completion_bullets,
            "output_schema": output_schema,
            "task_status": task_status,
            "source_files": source_files,
            "entry_points": entry_points,
            "architecture_summary": architecture_summary,
            "test_evidence": test_evidence,
        }
        return self._call("submit_output", [spec])

    def search_skills(self, query, *, limit=5):
        return self._call("search_skills", [{"query": query, "limit": limit}])

    def skill(self, name):
        return self.skills.get(name)

    def load_skill(self, name):
        return self._call("load_skill", [name])

    def bash(self, command, *, timeout=120, workdir=None):
        from openai4s.sdk import bash

        return bash.run(
            self._call, command, timeout=timeout, workdir=workdir, generation=self._generation
        )

    def read_file(self, path, *, offset=0, limit=2000):
        return self._call("read_file", [{"path": _path(path), "offset": offset, "limit": limit}])

    def write_file(self, path, content):
        return self._call("write_file", [{"path": _path(path), "content": content}])

    def edit_file(self, path, old_string, new_string, *, replace_all=False):
        spec = {
            "path": _path(path),
            "old_string": old_string,
            "new_string": new_string,
            "replace_all": replace_all,
        }
        return self._call("edit_file", [spec])

    def glob(self, pattern, *, path=None):
        return self._call("glob", [{"pattern": pattern, "path": _path(path)}])

    def grep(self, pattern, *, path=None, include=None):
        return self._call("grep", [{"pattern": pattern, "path": _path(path), "include": include}])

    def list_dir(self, path="."):
        return self._call("list_dir", [{"path": _path(path)}])

    def web_fetch(
        self, url, *, format="markdown", timeout=30, max_chars=20000, method="GET", user_agent=None
    ):
        """The page at `url` as text (HTML as Markdown, or "text", or "html"
        as sent), at most `max_chars`; the host fetches it under its egress
        policy. Returns a dict: text, status, final_url, bytes, truncated."""
        spec = {
            "url": url,
            "format": format,
            "timeout": timeout,
            "max_chars": max_chars,
            "method": method,
            "user_agent": user_agent,
        }
        return self._call("web_fetch", [spec])

    def web_download(self, url, path, *, max_bytes=None, timeout=60, user_agent=None):
        """Saves `url` to `path` in the workspace, whole or not at all (at most
        `max_bytes`, default 1 GiB, within `timeout` seconds); the host fetches
        it under its egress policy. Returns a dict: path, bytes, sha256, status."""
        spec = {
            "url": url,
            "path": _path(path),
            "timeout": timeout,
            "max_bytes": max_bytes,
            "user_agent": user_agent,
        }
        return self._call("web_download", [spec])

    def web_search(self, query, *, num_results=8, timeout=20):
        spec = {"query": query, "num_results": num_results, "timeout": timeout}
        return self._call("web_search", [spec])

    def remote_gpu_status(self):
        return self._call("remote_gpu_status", [{}])

    def accelerator_status(self):
        return self._call("accelerator_status", [{}])

    def stage_model_asset(self, source_path, *, asset_name=None, expected_sha256=None):
        spec = {
            "source_path": _path(source_path),
            "asset_name": asset_name,
            "expected_sha256": expected_sha256,
        }
        return self._call("stage_model_asset", [spec])

    def register_remote_capability(
        self,
        alias,
        capability,
        *,
        script="",
        engine="",
        invoke="",
        markers=None,
        notes="",
        probe=None,
        verify_command="",
    ):
        spec = {
            "alias": alias,
            "capability": capability,
            "script": script,
            "engine": engine,
            "invoke": invoke,
            "markers": markers or {},
            "notes": notes,
            "probe": probe,
            "verify_command": verify_command,
        }
        return self._call("register_remote_capability", [spec])

    def fold(self, sequence, *, name="protein", gpu=0, cycle=10, step=40):
        spec = {"sequence": sequence, "name": name, "gpu": gpu, "cycle": cycle, "step": step}
        return self._call("fold", [spec])

    def score_mutations(self, sequence, *, name="protein", positions=None, gpu=0):
        spec = {"sequence": sequence, "name": name, "positions": positions, "gpu": gpu}
        return self._call("score_mutations", [spec])

    def request_network_access(self, domain, *, reason=None):
        """Asks the person to let the host fetch from `domain` for the rest of
        this conversation; refused when nobody can be asked."""
        return self._call("request_network_access", [{"domain": domain, "reason": reason}])

    def todo_write(self, todos):
        return self._call("todo_write", [{"todos": todos}])

    def todo_read(self):
        return self._call("todo_read", [])

    def plan_update(self, step_id, status, note=None):
        spec = {"step_id": step_id, "status": status, "note": note}
        return self._call("plan_update", [spec])

    def plan_read(self):
        return self._call("plan_read", [])

    def review_status(self):
        return self._call("review_status", [])

    def remember(self, content, *, block="general"):
        return self._call("remember", [{"content": content, "block": block}])


class _ControlPlaneHost(_Host):
    """The full facade of a control-plane (``repl``) kernel."""

    def __init__(self, host_call, generation=None) -> None:
        super().__init__(host_call, generation)
        self.mcp = namespaces.Mcp(self._call)
        self.query = namespaces.Query(self._call)

    def frames(
        self,
        *,
        frame_id=None,
        pattern=None,
        project_id="default",
        status=None,
        roots_only=True,
        page=0,
        page_size=50,
        limit=50,
    ):
        spec = {
            "frame_id": frame_id,
            "pattern": pattern,
            "project_id": project_id,
            "status": status,
            "roots_only": roots_only,
            "page": page,
            "page_size": page_size,
            "limit": limit,
        }
        return self._call("frames", [spec])

    def delegate(
        self,
        request=None,
        *,
        task=None,
        name=None,
        context_summary=None,
        output_schema=None,
        steps=None,
        max_steps=None,
        max_turns=None,
        permissions=None,
        capabilities=None,
        unrestricted=None,
        require_artifacts=None,
        retries=None,
        wait=True,
    ):
        spec = {
            "request": request,
            "task": task,
            "name": name,
            "context_summary": context_summary,
            "output_schema": output_schema,
            "steps": steps,
            "max_steps": max_steps,
            "max_turns": max_turns,
            "permissions": permissions,
            "capabilities": capabilities,
            "unrestricted": unrestricted,
            "require_artifacts": require_artifacts,
            "retries": retries,
            "wait": wait,
        }
        return self._call("delegate", [spec])

    def children(self):
        return self._call("children", [])

    def delegation_stats(self):
        return self._call("delegation_stats", [])

    def collect(self, child_ids=None, *, timeout=None):
        if isinstance(child_ids, str):
            child_ids = [child_ids]
        return self._call("collect", [{"child_ids": child_ids, "timeout": timeout}])

    def stop_child(self, child_id):
        return self._call("stop_child", [child_id])

    def send_message(self, child_id, message):
        return self._call("send_message", [{"child_id": child_id, "message": message}])


def build_host(host_call, *, mode="repl", generation=None):
    """The facade for ``mode``; ValueError for a mode no kernel has."""
    if mode == "repl":
        return _ControlPlaneHost(host_call, generation)
    if mode in ANALYSIS_MODES:
        return _Host(host_call, generation)
    raise ValueError(f"build_host: unknown kernel mode {mode!r}")
