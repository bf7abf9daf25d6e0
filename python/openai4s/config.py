"""Host configuration: the LLM provider and the daemon's settings.

Only the host reads this; the worker never sees the secrets it holds (the
worker environment is rebuilt from an allowlist).
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

_PLACEHOLDERS = frozenset(
    {
        "your-api-key-here",
        "your_api_key_here",
        "your-api-key",
        "your_api_key",
        "your-key-here",
        "your_key_here",
        "placeholder",
        "changeme",
        "replace-me",
    }
)

#: id -> (wire, default base URL, default model)
BUILTIN_PROVIDERS = {
    "ark": ("openai", "https://ark.cn-beijing.volces.com/api/plan/v3", "doubao-seed-2.0-pro"),
    "chatgpt": ("openai", "https://api.openai.com/v1", "gpt-5"),
    "openai_responses": ("responses", "https://api.openai.com/v1", "gpt-5"),
    "claude": ("anthropic", "https://api.anthropic.com", "claude-sonnet-4-5"),
    "gemini": ("gemini", "https://generativelanguage.googleapis.com", "gemini-2.5-flash"),
}

_NATIVE_KEY_VARIABLES = {
    "ark": ("ARK_API_KEY", "DOUBAO_API_KEY"),
    "chatgpt": ("OPENAI_API_KEY",),
    "openai_responses": ("OPENAI_API_KEY",),
    "claude": ("ANTHROPIC_API_KEY", "CLAUDE_API_KEY"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}


def _env_flag(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ("0", "false", "no", "off", "")


def _real_value(value):
    """The stripped value, or '' when it is empty or a known placeholder."""
    value = (value or "").strip()
    return "" if value.lower() in _PLACEHOLDERS else value


def _first_real(*candidates):
    for candidate in candidates:
        value = _real_value(candidate)
        if value:
            return value
    return ""


@dataclass
class LLMConfig:
    provider: str = os.environ.get("OPENAI4S_LLM_PROVIDER", "ark")
    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)
    max_tokens: int = int(os.environ.get("OPENAI4S_LLM_MAX_TOKENS") or 4096)
    temperature: float = float(os.environ.get("OPENAI4S_LLM_TEMPERATURE") or 0.7)
    timeout_s: float = float(os.environ.get("OPENAI4S_LLM_TIMEOUT") or 120)

    def __post_init__(self):
        prefix = "OPENAI4S_" + self.provider.upper().replace("-", "_")
        env = os.environ.get
        self.api_key = _first_real(
            self.api_key, env(prefix + "_API_KEY"), env("OPENAI4S_LLM_API_KEY")
        )
        self.base_url = (
            self.base_url or env(prefix + "_BASE_URL") or env("OPENAI4S_LLM_BASE_URL") or ""
        )
        self.model = self.model or env(prefix + "_MODEL") or env("OPENAI4S_LLM_MODEL") or ""
        if not self.api_key:
            native = _NATIVE_KEY_VARIABLES.get(self.provider, ())
            self.api_key = _first_real(*(env(name) for name in native))
        builtin = BUILTIN_PROVIDERS.get(self.provider)
        if builtin is not None:
            self.base_url = self.base_url or builtin[1]
            self.model = self.model or builtin[2]


def _default_data_dir():
    configured = os.environ.get("OPENAI4S_DATA_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".openai4s"


@dataclass
class SecurityConfig:
    safety_mode: str = field(
        default_factory=lambda: (
            os.environ.get("OPENAI4S_SAFETY", "heuristic")
            if os.environ.get("OPENAI4S_SAFETY", "heuristic") in ("off", "heuristic", "llm")
            else "heuristic"
        )
    )
    audit_hook: bool = field(default_factory=lambda: _env_flag("OPENAI4S_SAFETY_AUDIT_HOOK", True))
    # Our default is the allowlist (issue 30); "off" is an explicit opt-in.
    egress_mode: str = field(default_factory=lambda: os.environ.get("OPENAI4S_EGRESS", "allowlist"))


def _default_skills_dir():
    configured = os.environ.get("OPENAI4S_SKILLS_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(__file__).resolve().parent.parent.parent / "skills"


@dataclass
class Config:
    data_dir: Path = field(default_factory=_default_data_dir)
    host: str = os.environ.get("OPENAI4S_HOST", "127.0.0.1")
    port: int = int(os.environ.get("OPENAI4S_PORT") or 8760)
    llm: LLMConfig = field(default_factory=LLMConfig)
    security: SecurityConfig = field(default_factory=SecurityConfig)
    skills_dir: Path = field(default_factory=_default_skills_dir)

    def __post_init__(self):
        self.data_dir = Path(self.data_dir)
        self.skills_dir = Path(self.skills_dir)

    @property
    def logs_dir(self):
        return self.data_dir / "logs"

    @property
    def artifacts_dir(self):
        return self.data_dir / "artifacts"

    @property
    def db_path(self):
        return self.data_dir / "openai4s.db"

    def ensure_dirs(self):
        for path in (self.data_dir, self.logs_dir, self.artifacts_dir):
            path.mkdir(parents=True, exist_ok=True)
            os.chmod(path, 0o700)


_CONFIG = None


def get_config():
    """The process-wide configuration, created (with its directories) once."""
    global _CONFIG
    if _CONFIG is None:
        _CONFIG = Config()
        _CONFIG.ensure_dirs()
    return _CONFIG
