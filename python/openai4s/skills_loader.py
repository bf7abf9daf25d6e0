"""Skill discovery and the kernel-side import gate for skill sidecars.

A skill is a directory holding `SKILL.md`, optionally with a `kernel.py`
sidecar that a cell may import. `SkillLoader.bootstrap_code()` returns
self-contained Python source (it imports nothing from openai4s inside the
kernel) that installs a meta-path gate: only the sidecars in the manifest
load, each only if its bytes still hash to the manifest's digest, and a
denied skill's modules cannot be imported at all. Every name it leaves in
the user namespace starts with `_o4s_` or `_OpenAI4S` or is a dunder, so
the variable inspector shows the user only their own bindings.
"""

import hashlib
import json
import re
from pathlib import Path

from openai4s.config import get_config

_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
# Text run in the worker as a system cell, so it lives with the worker runtime.
_GATE_SOURCE = Path(__file__).parent / "kernel" / "runtime" / "skill_gate_cell.py"


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _frontmatter(text):
    match = _FRONTMATTER.match(text)
    fields = {}
    if match:
        for line in match.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip().strip("'\"")
    return fields


class SkillLoader:
    def __init__(
        self, skills_dir=None, cfg=None, *, capabilities=None, project_id=None, session_id=None
    ):
        self.cfg = cfg or get_config()
        self.skills_dir = Path(skills_dir) if skills_dir is not None else Path(self.cfg.skills_dir)
        self.project_id = project_id
        self.session_id = session_id

    def discover(self):
        """Bundled skills, then user skills (a user skill never shadows a
        bundled one of the same name)."""
        roots = [(self.skills_dir, "bundled"), (Path(self.cfg.data_dir) / "user-skills", "user")]
        skills, seen = [], set()
        for root, source in roots:
            if not root.is_dir():
                continue
            for directory in sorted(p for p in root.iterdir() if (p / "SKILL.md").is_file()):
                document = directory / "SKILL.md"
                meta = _frontmatter(document.read_text(encoding="utf-8", errors="replace"))
                name = meta.get("name") or directory.name
                key = " ".join(name.casefold().split())
                if key in seen:
                    continue
                seen.add(key)
                sidecar = directory / "kernel.py"
                sidecar_sha = _sha256(sidecar) if sidecar.is_file() else None
                document_sha = _sha256(document)
                skills.append(
                    {
                        "name": name,
                        "directory": directory.name,
                        "path": str(directory.resolve()),
                        "source": source,
                        "description": meta.get("description", "")[:200],
                        "version": meta.get("version") or (sidecar_sha or document_sha)[:12],
                        "document_sha256": document_sha,
                        "sidecar": {"present": sidecar_sha is not None, "sha256": sidecar_sha},
                    }
                )
        return skills

    def bootstrap_manifest(self, persist=True):
        entries = [
            {
                "name": s["name"],
                "directory": s["directory"],
                "origin": s["source"],
                "enabled": True,
                "version": s["version"],
                "document_sha256": s["document_sha256"],
                "sidecar": dict(s["sidecar"], loaded=False),
            }
            for s in self.discover()
        ]
        digest = hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()
        return {
            "manifest_id": "local-" + digest[:20],
            "kind": "skill",
            "entries": entries,
            "load_events": [],
        }

    def bootstrap_code(self, *, allowed=None):
        skills = self.discover()
        manifest = self.bootstrap_manifest()
        denied = sorted(
            s["directory"] for s in skills if allowed is not None and s["name"] not in allowed
        )
        sidecars = {
            s["directory"]: {"path": s["path"], "sha256": s["sidecar"]["sha256"], "name": s["name"]}
            for s in skills
            if s["sidecar"]["present"] and s["directory"] not in denied
        }
        policy = {
            "manifest": {
                "manifest_id": manifest["manifest_id"],
                "kind": "skill",
                "entries": [e for e in manifest["entries"] if e["sidecar"]["present"]],
                "load_events": [],
            },
            "sidecars": sidecars,
            "denied": denied,
            "skill_dirs": sorted(s["directory"] for s in skills),
        }
        return (
            f"_o4s_policy_json = {json.dumps(json.dumps(policy, sort_keys=True))}\n"
            + _GATE_SOURCE.read_text(encoding="utf-8")
        )
