"""The matplotlib backend name the worker sets (``module://openai4s.kernel.
mpl_inline``, what get_backend() reports): ``openai4s.kernel.runtime.mpl_inline``
as the same module object (sys.modules points this name at it), not a copy, so an
attribute set through either name is the one the runtime reads."""

import sys

from openai4s.kernel.runtime import mpl_inline as _runtime

sys.modules[__name__] = _runtime
