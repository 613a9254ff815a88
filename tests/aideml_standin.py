"""A stand-in for MLE-bench's fork of AIDE (github.com/thesofakillers/aideml, tag v6.3.3), which this
machine cannot reach: the source of `aideml` 0.2.2 from PyPI (WecoAI's AIDE, which the fork forked),
with the few changes that make it behave where MLE-bench's `agents/aide` start.sh and config.yaml
expect the fork. Each is what the fork does and 0.2.2 does not:

- `requirements.txt` keeps AIDE's own block, plus `backoff`, which aide/backend/utils.py imports and
  0.2.2 does not list (one of its other requirements brings it); 0.2.2 also lists the libraries its
  solutions might use (torch, transformers, fastai, ...), which MLE-bench's mlebench-env provides and
  which would have pip fetch gigabytes into the light flavour here;
- its OpenAI client takes OPENAI_BASE_URL (0.2.2 sends OpenAI's model names to api.openai.com);
- the experiment's folders are named `exp_name` as given (0.2.2 prefixes an index), so start.sh's
  links `logs/exp` -> LOGS_DIR and `workspaces/exp/best_submission` -> SUBMISSION_DIR are used;
- `agent.time_limit` is an option (MLE-bench's config.yaml sets it);
- after each step the best good node's code and submission are kept in the workspace's
  `best_solution/` and `best_submission/` (0.2.2 keeps only the last solution's submission).

Nothing is measured against MLE-bench's AIDE numbers with it: it stands in for the repository a git
mirror would hold, so that MLE-bench's aide directory can be built and run unchanged.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

VERSION = "0.2.2"
TAG = "v6.3.3"  # the fork's tag MLE-bench's agents/aide/requirements.txt names

KEEP_BEST = '''

def _keep_best(cfg, journal):
    """As MLE-bench's fork: the best good node's code and submission, in the workspace."""
    import shutil

    best = journal.get_best_node(only_good=True)
    if best is None or best is not journal.nodes[-1]:
        return
    (cfg.workspace_dir / "best_solution").mkdir(exist_ok=True)
    (cfg.workspace_dir / "best_solution" / "solution.py").write_text(best.code)
    for made in (cfg.workspace_dir / "submission" / "submission.csv",
                 cfg.workspace_dir / "working" / "submission.csv"):
        if made.exists():
            (cfg.workspace_dir / "best_submission").mkdir(exist_ok=True)
            shutil.copyfile(made, cfg.workspace_dir / "best_submission" / "submission.csv")
            return
'''

PATCHES = {  # file: [(old, new)], each old found exactly once
    "aide/backend/backend_openai.py": [
        (
            'OPENAI_BASE_URL = "https://api.openai.com/v1"',
            'OPENAI_BASE_URL = os.getenv("OPENAI_BASE_URL") or "https://api.openai.com/v1"',
        )
    ],
    "aide/utils/config.py": [
        ('    cfg.exp_name = f"{ind}-{cfg.exp_name}"\n', ""),
        ("    search: SearchConfig\n", "    search: SearchConfig\n    time_limit: int = 86400\n"),
        (
            "def save_run(cfg: Config, journal):\n",
            "def save_run(cfg: Config, journal):\n    _keep_best(cfg, journal)\n",
        ),
    ],
    "aide/utils/config.yaml": [("  steps: 20\n", "  steps: 20\n  time_limit: 86400\n")],
}


def fetch_sdist(into: Path) -> Path:
    """aideml's sdist from the package index this host's pip uses."""
    into.mkdir(parents=True, exist_ok=True)
    found = sorted(into.glob(f"aideml-{VERSION}.tar.gz"))
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-q",
                "-d",
                str(into),
                f"aideml=={VERSION}",
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        found = sorted(into.glob(f"aideml-{VERSION}.tar.gz"))
    return found[0]


def files(sdist: Path) -> dict[str, bytes]:
    """The stand-in repository's files: the sdist's source with the changes above."""
    prefix = f"aideml-{VERSION}/"
    found: dict[str, bytes] = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            if member.isfile() and ".egg-info/" not in member.name and member.name != prefix + "PKG-INFO":
                found[member.name.removeprefix(prefix)] = tar.extractfile(member).read()  # type: ignore[union-attr]
    for name, changes in PATCHES.items():
        text = found[name].decode()
        for old, new in changes:
            assert text.count(old) == 1, (name, old)
            text = text.replace(old, new)
        found[name] = (text + KEEP_BEST if name.endswith("config.py") else text).encode()
    requirements = found["requirements.txt"].decode()
    found["requirements.txt"] = (requirements.split("# agent requirements")[0] + "backoff==2.2.1\n").encode()
    return found
