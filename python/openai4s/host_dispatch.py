"""The host dispatcher: permission policy, bash capability, audit log.

It arrives with the host-side issue (spec/host.md). Until then the name
exists so the API's shape is stable, and calling it says plainly that it is
not built, rather than pretending to enforce a policy it does not have.
"""


class HostDispatchNotImplemented(NotImplementedError):
    pass


def build_dispatcher(cfg, *, workspace=None, **_options):
    raise HostDispatchNotImplemented(
        "openai4s.host_dispatch.build_dispatcher is not implemented yet: the host "
        "dispatcher (permission policy, bash capability, store) has not been built"
    )
