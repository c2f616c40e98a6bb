"""Shared by the ddlsim module's tests: the `ddlsim` command to compare with, when ctest names it."""
import json
import os
import subprocess
from pathlib import Path

import pytest

SOURCE_DIR = Path(__file__).resolve().parents[2]
MEASURED_DIR = SOURCE_DIR / "tests" / "calibrate" / "data"


@pytest.fixture
def command_report(tmp_path):
    """Runs `ddlsim ARGS... --json FILE` and returns the report it wrote."""
    executable = os.environ.get("DDLSIM_EXECUTABLE")
    if not executable:
        pytest.skip("DDLSIM_EXECUTABLE names no ddlsim command to compare with")

    def run(*args):
        out = tmp_path / "report.json"
        subprocess.run([executable, *map(str, args), "--json", str(out)], check=True,
                       stdout=subprocess.DEVNULL, cwd=tmp_path)
        return json.loads(out.read_text())

    return run
