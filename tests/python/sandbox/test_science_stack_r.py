"""A fresh R kernel loads the R packages `make setup` installs (the README's
table) and uses them, plots included, in both sandbox modes."""

import base64
import shutil

import pytest

from openai4s.kernel.r_kernel import spawn_r_kernel
from openai4s.kernel.sandbox_status import sandbox_for

pytestmark = pytest.mark.skipif(
    shutil.which("Rscript") is None, reason="R is not installed (Debian r-base-core)"
)

R_STACK = ["ggplot2", "dplyr", "tidyr", "data.table", "jsonlite"]

USE_THEM = """
suppressPackageStartupMessages({
  library(ggplot2); library(dplyr); library(tidyr); library(data.table); library(jsonlite)
})
frame <- data.frame(g = c("a", "a", "b"), v = c(1, 2, 5))
means <- frame %>% group_by(g) %>% summarise(m = mean(v), .groups = "drop")
wide <- pivot_wider(means, names_from = g, values_from = m)
table <- as.data.table(frame)[, .(total = sum(v)), by = g]
cat(toJSON(list(wide = wide, total = table$total), auto_unbox = TRUE), "\\n")
print(ggplot(frame, aes(g, v)) + geom_col())
"""


def test_the_r_stack_loads_and_plots(tmp_path, sandbox_mode):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    kernel = spawn_r_kernel(
        cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode=sandbox_mode)
    )
    try:
        result = kernel.execute(
            f"cat(sapply({R_STACK!r}, requireNamespace, quietly = TRUE))".replace(
                "[", "c("
            ).replace("]", ")")
        )
        assert result["error"] is None and result["stdout"].split() == ["TRUE"] * len(
            R_STACK
        ), result
        result = kernel.execute(USE_THEM)
        assert result["error"] is None, result
        assert result["stdout"].split()[0] == '{"wide":[{"a":1.5,"b":5}],"total":[3,5]}'
        pngs = [d["data"]["image/png"] for d in result["displays"]]
        assert len(pngs) == 1 and base64.b64decode(pngs[0])[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        kernel.shutdown()
