"""A fresh Python kernel imports the science stack `make setup` installs
(the README's table), uses it, and cannot change it: the packages are the
system's, read-only in both sandbox modes."""

import base64
import json

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

#: import name -> the Debian package that provides it (README's table).
STACK = {
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "pandas": "python3-pandas",
    "sklearn": "python3-sklearn",
    "statsmodels": "python3-statsmodels",
    "sympy": "python3-sympy",
    "matplotlib": "python3-matplotlib",
    "seaborn": "python3-seaborn",
    "xarray": "python3-xarray",
    "h5py": "python3-h5py",
    "netCDF4": "python3-netcdf4",
    "astropy": "python3-astropy",
    "Bio": "python3-biopython",
    "rdkit": "python3-rdkit",
}

IMPORT_ALL = """
import importlib, json, os
found = {}
for name in NAMES:
    module = importlib.import_module(name)
    found[name] = [getattr(module, "__version__", "?"), os.path.dirname(module.__file__)]
print(json.dumps(found))
"""

USE_THEM = """
import numpy as np, pandas as pd, xarray as xr, h5py, netCDF4
from scipy import stats
from sklearn.linear_model import LinearRegression
import statsmodels.api as sm
from rdkit import Chem
from Bio.Seq import Seq
from astropy import units as u
frame = pd.DataFrame({"x": np.arange(10.0), "y": 2 * np.arange(10.0) + 1})
fit = LinearRegression().fit(frame[["x"]], frame["y"])
ols = sm.OLS(frame["y"], sm.add_constant(frame["x"])).fit()
with h5py.File("cells.h5", "w") as handle:
    handle["y"] = frame["y"].to_numpy()
with netCDF4.Dataset("cells.nc", "w") as nc:
    nc.createDimension("x", 10)
    nc.createVariable("y", "f8", ("x",))[:] = frame["y"].to_numpy()
array = xr.open_dataset("cells.nc")["y"].values
print(round(fit.coef_[0], 6), round(ols.params["x"], 6), round(stats.pearsonr(frame.x, frame.y)[0], 6),
      Chem.MolToSmiles(Chem.MolFromSmiles("OCC")), str(Seq("ATGC").reverse_complement()),
      (1 * u.km).to(u.m).value, float(array.sum()))
"""


SEABORN_PLOT = """
import seaborn as sns, matplotlib.pyplot as plt
sns.barplot(x=["a", "b", "a"], y=[1.0, 5.0, 2.0], errorbar=None)
plt.show()
"""


PLANT = """
import os, pandas
target = os.path.join(os.path.dirname(pandas.__file__), "planted.py")
try:
    open(target, "w")
except OSError as exc:
    print(type(exc).__name__, exc.errno)
"""


def _kernel(workspace, mode):
    return Kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode=mode))


def test_the_stack_imports_works_together_and_stays_the_system_s(workspace, sandbox_mode):
    kernel = _kernel(workspace, sandbox_mode)
    try:
        result = kernel.execute(f"NAMES = {sorted(STACK)!r}\n" + IMPORT_ALL)
        assert result["error"] is None, result["error"]
        found = json.loads(result["stdout"])
        assert sorted(found) == sorted(STACK)
        # Debian's, not something in the workspace or a user site.
        assert all(path.startswith("/usr/lib/python3/") for _, path in found.values()), found

        result = kernel.execute(USE_THEM)
        assert result["error"] is None, result["error"]
        assert result["stdout"].split() == ["2.0", "2.0", "1.0", "CCO", "GCAT", "1000.0", "100.0"]

        result = kernel.execute(SEABORN_PLOT)
        assert result["error"] is None, result["error"]
        pngs = [d["data"]["image/png"] for d in result["displays"] if "image/png" in d["data"]]
        assert len(pngs) == 1, result["displays"]
        assert base64.b64decode(pngs[0])[:8] == b"\x89PNG\r\n\x1a\n"

        if sandbox_mode == "enforce":
            # A sandboxed cell cannot plant code in the system's packages
            # (unsandboxed, the user's own permissions decide).
            result = kernel.execute(PLANT)
            assert result["error"] is None, result["error"]
            assert result["stdout"].split()[1] in ("30", "13"), result["stdout"]  # EROFS/EACCES
    finally:
        kernel.shutdown()
