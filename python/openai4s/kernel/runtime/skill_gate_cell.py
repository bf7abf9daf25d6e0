# Kernel-side half of openai4s.skills_loader (never imported): this file's text is appended to
# a generated `_o4s_policy_json = "..."` line and run as a system cell in the
# user's namespace. It must stay self-contained (no openai4s imports) and
# bind only `_o4s_*` / `_OpenAI4S*` / dunder names.
import hashlib as _o4s_hashlib
import importlib.abc as _o4s_importlib_abc
import importlib.util as _o4s_importlib_util
import json as _o4s_json
import os as _o4s_os
import sys as _o4s_sys

_o4s_policy = _o4s_json.loads(_o4s_policy_json)
__openai4s_skill_bootstrap_manifest__ = _o4s_policy["manifest"]
__openai4s_skill_load_events__ = __openai4s_skill_bootstrap_manifest__["load_events"]
_o4s_sidecars = _o4s_policy["sidecars"]
_o4s_denied = frozenset(_o4s_policy["denied"])
_o4s_skill_dirs = frozenset(_o4s_policy["skill_dirs"])
_o4s_frozen_recovery_active = False

# Idempotent: forget skill modules and any gate a previous run installed.
for _o4s_module in [m for m in _o4s_sys.modules if m.split(".", 1)[0] in _o4s_skill_dirs]:
    del _o4s_sys.modules[_o4s_module]
_o4s_sys.meta_path[:] = [
    f for f in _o4s_sys.meta_path if not getattr(f, "_openai4s_skill_gate", False)
]


class _OpenAI4SSkillGate(_o4s_importlib_abc.MetaPathFinder):
    """Resolves skill packages and their frozen `kernel` sidecars."""

    _openai4s_skill_gate = True

    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if head not in _o4s_skill_dirs:
            return None
        if head in _o4s_denied:
            raise ModuleNotFoundError(f"skill sidecar '{head}' is not available to this agent")
        sidecar = _o4s_sidecars.get(head)
        if not rest:
            spec = _o4s_importlib_util.spec_from_loader(head, loader=None, is_package=True)
            if sidecar is not None:
                spec.submodule_search_locations = [sidecar["path"]]
            return spec
        if rest != "kernel":
            return None
        if sidecar is None:
            raise ModuleNotFoundError(f"skill '{head}' has no frozen kernel.py sidecar")
        return _o4s_importlib_util.spec_from_loader(fullname, _OpenAI4STrackedSkillLoader(head))


class _OpenAI4STrackedSkillLoader(_o4s_importlib_abc.Loader):
    """Loads a sidecar only if its bytes still match the manifest digest."""

    def __init__(self, directory):
        self.directory = directory

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        sidecar = _o4s_sidecars[self.directory]
        path = _o4s_os.path.join(sidecar["path"], "kernel.py")
        with open(path, "rb") as handle:
            source = handle.read()
        if _o4s_hashlib.sha256(source).hexdigest() != sidecar["sha256"]:
            raise ImportError(
                "Skill sidecar changed after bootstrap; restart the kernel to accept a new "
                "capability manifest"
            )
        module.__file__ = path
        exec(compile(source, path, "exec"), module.__dict__)
        __openai4s_skill_load_events__.append(
            {"event": "sidecar_loaded", "skill": sidecar["name"], "module": module.__name__}
        )


_o4s_sys.meta_path.insert(0, _OpenAI4SSkillGate())
del _o4s_policy_json
