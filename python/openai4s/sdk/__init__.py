"""In-kernel SDK: the ``host`` facade a Cell uses to reach the host."""

from openai4s.sdk.host import HOST_CAPABILITY_VERSION, build_host, encode_args

__all__ = ["HOST_CAPABILITY_VERSION", "build_host", "encode_args"]
