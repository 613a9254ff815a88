"""The `mlebench-env` image that MLE-bench agents' Dockerfiles start FROM, built offline.

MLE-bench's own base is Ubuntu with Miniconda and CUDA wheels, downloaded at build time. Ours is the
site's debootstrapped Debian (runner.agent_image) with what those Dockerfiles and start scripts rely
on: the user `nonroot`, /home/data and /home/submission (the sandbox adds logs, code and agent), a
root-only /private, an environment named `agent` (a venv at /opt/conda/envs/agent over Debian's
python3 with numpy, pandas, scipy and scikit-learn) and a `conda` on PATH that covers the commands
they use (runner.agents.conda_shim), plus curl (validate_submission.sh) and envsubst (their prompts).

    python manage.py build_agent_image --mlebench-env
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from runner.agent_image import PACKAGES, Recipe

TAG = "mlebench-env"
USER = "nonroot"
CONDA_ROOT = "/opt/conda"
AGENT_ENV = f"{CONDA_ROOT}/envs/agent"
SHIM = Path(__file__).resolve().parent / "conda_shim.py"
EXTRA_PACKAGES = ("python3-venv", "python-is-python3", "curl", "gettext-base", "unzip", "zip", "procps")
ACTIVATE = f'eval "$({CONDA_ROOT}/bin/conda shell.bash activate "${{1:-base}}")"\n'
PROFILE = f'eval "$({CONDA_ROOT}/bin/conda shell.bash hook)"\n'
PIP_CONF = "[global]\ndisable-pip-version-check = true\nno-input = true\n"
# As the sandbox runs it: the user, the conda commands the agents use, their libraries, the tools.
SELF_CHECK = f"""set -eu
test "$(id -un)" = {USER}
eval "$(conda shell.bash hook)"
conda activate agent
test "$(command -v python)" = {AGENT_ENV}/bin/python
python -c 'import numpy, pandas, scipy, sklearn'
conda run -n agent --no-capture-output python -c 'import sys; assert sys.prefix == "{AGENT_ENV}"'
conda install -y -n agent numpy pandas scikit-learn
conda clean -afy
conda deactivate
source {CONDA_ROOT}/bin/activate agent && test "$CONDA_DEFAULT_ENV" = agent
command -v curl envsubst unzip >/dev/null
if ls /private >/dev/null 2>&1; then echo '/private is readable'; exit 1; fi
echo mlebench-env ok
"""


def finish(rootfs: Path) -> None:
    """The `agent` venv, the conda shim and its activate scripts, /private, pip's offline manners."""
    subprocess.run(["chroot", str(rootfs), "/usr/bin/python3", "-m", "venv", "--system-site-packages", AGENT_ENV],
                   check=True, capture_output=True)
    conda_bin = rootfs / CONDA_ROOT.lstrip("/") / "bin"
    conda_bin.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SHIM, conda_bin / "conda")
    (conda_bin / "activate").write_text(ACTIVATE)
    (conda_bin / "deactivate").write_text(f'eval "$({CONDA_ROOT}/bin/conda shell.bash deactivate)"\n')
    for name in ("conda", "activate", "deactivate"):
        os.chmod(conda_bin / name, 0o755)
    profile = rootfs / CONDA_ROOT.lstrip("/") / "etc/profile.d"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "conda.sh").write_text(PROFILE)
    (rootfs / "etc/pip.conf").write_text(PIP_CONF)
    (rootfs / "private").mkdir(mode=0o700, exist_ok=True)


def _revision(*parts) -> str:
    """What finish() writes and the layout, as a fingerprint: a host whose mlebench-env came from an
    older recipe builds it again instead of keeping it by its tag."""
    return hashlib.sha256(repr((SHIM.read_bytes(), *parts)).encode()).hexdigest()[:16]


# As MLE-bench's base: /home/submission, and /home/data to mount on. logs, code and agent are the
# agent's Dockerfile's to make (MLE-bench's aide and mlagentbench `RUN mkdir` them without -p, which
# fails on a folder that exists); the sandbox mounts logs and code and seeds agent at run time.
FOLDERS = ("home/data", "home/submission", "opt/medalboard")
RECIPE = Recipe(
    packages=(*PACKAGES, *EXTRA_PACKAGES),
    self_check=("bash", "-c", SELF_CHECK),
    user=USER,
    folders=FOLDERS,
    finish=finish,
    env={"PATH": f"{CONDA_ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
         "CONDA_ENV_NAME": "agent"},
    changes=("WORKDIR /home", 'CMD ["bash"]'),
    revision=_revision(FOLDERS, ACTIVATE, PROFILE, PIP_CONF, SELF_CHECK, EXTRA_PACKAGES, AGENT_ENV),
)
