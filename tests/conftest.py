import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MODELS = FIXTURES / "models"
MLPERF = FIXTURES / "mlperf"
BAD = FIXTURES / "bad"
REGIMES = FIXTURES / "regimes"
MLPERF_MODELS = {
    "kws": MLPERF / "kws_ref_model.tflite",
    "vww": MLPERF / "vww_96_int8.tflite",
    "ic": MLPERF / "pretrainedResnet_quant.tflite",
    "ad": MLPERF / "ad01_int8.tflite",
}


def manifest() -> list[dict]:
    """Every fixture of tests/fixtures/models: MANIFEST.json and the groups' MANIFEST.<group>.json
    (tools/gen_fixtures.py and its tools/fixtures_<group>.py tables)."""
    return [e for path in sorted(MODELS.glob("MANIFEST*.json")) for e in json.loads(path.read_text())]


def regimes() -> list[dict]:
    """tests/fixtures/regimes/MANIFEST.json (tools/gen_regimes.py): models at the edges of what TFLM defines."""
    return json.loads((REGIMES / "MANIFEST.json").read_text())


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real console entry point as a user would, in a child process."""
    env = dict(os.environ)
    env.pop("MCUFORGE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "mcuforge", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


def compiled_dir(tmp_path_factory, model: Path, *extra: str) -> Path:
    """A fresh directory written by `mcuforge compile MODEL -o DIR`, through the command line."""
    out = tmp_path_factory.mktemp(model.stem) / "model"
    proc = run_cli("compile", model, "-o", out, *extra)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(autouse=True, scope="session")
def build_cache(tmp_path_factory):
    """`mcuforge build DIR` builds under $XDG_CACHE_HOME: the tests' builds go to a temporary
    directory, not the user's ~/.cache."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    yield
    patch.undo()


@pytest.fixture
def cli():
    return run_cli
