"""Grouped members of the ``host`` facade (``host.skills``, ``host.env``, ...).

Each is a thin RPC wrapper over the facade's encoded ``_call``.
"""


class AttrDict(dict):
    """A result dict whose keys also read as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class _Group:
    __slots__ = ("_call",)

    def __init__(self, call) -> None:
        self._call = call


class Skills(_Group):
    __slots__ = ()

    def list(self):
        return self._call("skills_list", [])

    def get(self, name):
        return self._call("skills_get", [name])

    def read(self, name, path="SKILL.md"):
        return self._call("skills_read", [{"name": name, "path": path}])

    def edit(self, name, path, content, old_string=None):
        spec = {"name": name, "path": path, "content": content, "old_string": old_string}
        return self._call("skills_edit", [spec])

    def publish(self, name):
        return self._call("skills_publish", [name])

    def delete(self, name):
        return self._call("skills_delete", [name])

    def status(self, name, scope="personal"):
        return self._call("skills_status", [{"name": name, "scope": scope}])

    def history(self, name, scope="personal", limit=50):
        spec = {"name": name, "scope": scope, "limit": limit}
        return self._call("skills_history", [spec])

    def rollback(self, name, version_id, scope="personal"):
        spec = {"name": name, "scope": scope, "version_id": version_id}
        return self._call("skills_rollback", [spec])


class Lineage(_Group):
    __slots__ = ()

    def __getitem__(self, version_id):
        result = self._call("lineage_get", [version_id])
        return AttrDict(result) if isinstance(result, dict) else result

    def graph(self, version_id, direction="up", max_depth=None, max_nodes=None):
        spec = {
            "version_id": version_id,
            "direction": direction,
            "max_depth": max_depth,
            "max_nodes": max_nodes,
        }
        return self._call("lineage_graph", [spec])


class Endpoints(_Group):
    __slots__ = ()

    def list(self):
        return self._call("endpoints_list", [])

    def free_port(self):
        return self._call("endpoints_free_port", [])

    def register(self, name, **spec):
        return self._call("endpoints_register", [{**spec, "name": name}])

    def status(self, name):
        return self._call("endpoints_status", [name])

    def probe(self, name):
        return self._call("endpoints_probe", [name])


class Credentials(_Group):
    __slots__ = ()

    def set(self, name, value):
        return self._call("credentials_set", [{"name": name, "value": value}])

    def issue(self, name, *, purpose="host credential access", ttl_seconds=30.0):
        spec = {"name": name, "purpose": purpose, "ttl_seconds": ttl_seconds}
        return self._call("credentials_issue", [spec])

    def redeem(self, token):
        return self._call("credentials_redeem", [token])

    def get(self, name):
        issued = self.issue(name)
        token = issued.get("token") if isinstance(issued, dict) else issued
        redeemed = self.redeem(token)
        if isinstance(redeemed, dict) and "value" in redeemed:
            return redeemed["value"]
        return redeemed

    def list(self):
        return self._call("credentials_list", [])


class Mcp(_Group):
    __slots__ = ()

    def list(self):
        return self._call("mcp_list", [])

    def tools(self, server):
        return self._call("mcp_tools", [server])

    def resources(self, server, cursor=None):
        return self._call("mcp_resources", [{"server": server, "cursor": cursor}])

    def read_resource(self, server, uri):
        return self._call("mcp_resource_read", [{"server": server, "uri": uri}])

    def prompts(self, server, cursor=None):
        return self._call("mcp_prompts", [{"server": server, "cursor": cursor}])

    def get_prompt(self, server, name, arguments=None):
        spec = {"server": server, "name": name, "arguments": arguments or {}}
        return self._call("mcp_prompt_get", [spec])

    def call(self, server, tool, args=None):
        spec = {"server": server, "tool": tool, "args": args or {}}
        return self._call("mcp_call", [spec])


# The host.env paths this worker put first on sys.path (one environment is
# active at a time).
_ENV_PATHS = []


def _activate(result):
    """Put the environment the host answered with first on sys.path (the
    host installed it where this kernel reads it), replacing the one put
    there before; a module already imported stays as it was loaded."""
    if not isinstance(result, dict) or "python_path" not in result:
        return result
    import importlib
    import sys

    for path in _ENV_PATHS:
        while path in sys.path:
            sys.path.remove(path)
    _ENV_PATHS.clear()
    path = result.get("python_path")
    if path:
        sys.path.insert(0, path)
        _ENV_PATHS.append(path)
    importlib.invalidate_caches()
    return result


class Env(_Group):
    """Environments on demand: the host installs packages (``"r:<name>"``
    for an R package) into a workspace environment outside the sandbox,
    and this kernel imports them at once."""

    __slots__ = ()

    def list(self, packages=None):
        return self._call("env_list", [{"packages": packages}])

    def use(self, name):
        return _activate(self._call("env_use", [{"name": name}]))

    def list_dependencies(self, packages):
        return self._call("env_list", [{"packages": packages}])

    def create(self, name=None, packages=None):
        return _activate(self._call("env_setup", [{"name": name, "packages": packages}]))

    def lock(self, name=None):
        """The environment (default: the active one) as a lock: versions
        and sha256 hashes, and pip's ``requirements`` text with --hash."""
        return self._call("env_lock", [{"name": name}])


class App(_Group):
    __slots__ = ()

    def render(self, kind, payload):
        return self._call("app_render", [{"kind": kind, "payload": payload}])

    def tiles(self):
        return self._call("app_tiles", [])


class Science(_Group):
    __slots__ = ()

    def list_databases(self, domain="all"):
        return self._call("science_list_dbs", [{"domain": domain}])

    def search(self, database, query, *, limit=10, cursor=None, filters=None, timeout=30.0):
        spec = {
            "database": database,
            "query": query,
            "limit": limit,
            "cursor": cursor,
            "filters": filters,
            "timeout": timeout,
        }
        return self._call("science_search", [spec])


class Query(_Group):
    """``host.query(sql, ...)``; ``host.query.schema()``."""

    __slots__ = ()

    def __call__(self, sql, params=None, limit=None, df=False, scope="project"):
        spec = {"sql": sql, "params": params or [], "limit": limit, "df": df, "scope": scope}
        result = self._call("query", [spec])
        if df and isinstance(result, dict) and "rows" in result:
            try:
                import pandas
            except ImportError:
                return result
            return pandas.DataFrame(result["rows"], columns=result.get("columns"))
        return result

    def schema(self):
        return self._call("query_schema", [])
