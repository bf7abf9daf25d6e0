"""openai4s: a persistent, sandboxable code-execution kernel runtime for agents.

Kept import-light on purpose: the worker process imports this package too,
and must not pay for (or load) the C++ host core.
"""

__version__ = "0.1.0"
