"""The name Cells import: ``openai4s.kernel.runtime.display``, as the same
module object (sys.modules points this name at it), not a copy, so an
attribute set through either name is the one the runtime reads."""

import sys

from openai4s.kernel.runtime import display as _runtime

sys.modules[__name__] = _runtime
