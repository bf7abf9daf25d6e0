"""openai4s's benchmark suite: the kernel measured side by side with Jupyter's
ipykernel (and plain Python as the physical limit) in one run.

Run it from the project root with `python -m bench [--quick|--smoke]`; see
`bench/__main__.py`. Never part of the default test run except its smoke mode.
"""
