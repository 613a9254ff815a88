"""What a trajectory file's surroundings say about its run when the file itself does not: the task
and the model, from the folders agents and benchmarks write their logs into.

- an MLE-bench run folder anywhere above the file: `<competition>_<uuid>/...`;
- AIDE's log folder: `config.yaml` next to `journal.json` (`agent.code.model`, `data_dir`, `exp_name`);
- MLAgentBench's layout `<model>/<task>/<seed>/env_log/trace.json`, or that path flattened into a file
  name, `<model>_<task>_<seed>_trace.json`;
- else the file's name without the format's own suffix (`..._journal`, `..._trace`).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

RUN_FOLDER = re.compile(r"^(?P<competition>.+?)_[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
                        re.IGNORECASE)
FLAT_MLAB = re.compile(r"^(?P<model>.+)_(?P<task>[^_]+)_(?P<seed>\d+)_trace$")
OWN_SUFFIXES = ("_journal", "-journal", "_trace", "-trace", "_main_log")
GENERIC_FOLDERS = {"data", "input", "home", "logs", "workspace", ""}


def run_context(path: Path) -> dict[str, str]:
    """{"task": ..., "model": ...}, each only where the surroundings say it."""
    found: dict[str, str] = {}
    for folder in path.resolve().parents:
        if match := RUN_FOLDER.match(folder.name):
            found["task"] = match["competition"]
            break
    for key, value in {**_aide_config(path.parent / "config.yaml"), **_mlab_layout(path)}.items():
        found.setdefault(key, value)
    if "task" not in found:
        found["task"] = _name_of(path)
    return {k: v for k, v in found.items() if v}


def _aide_config(config: Path) -> dict[str, str]:
    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8")) if config.is_file() else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    if not isinstance(data, dict):
        return {}
    code = (data.get("agent") or {}).get("code") or {} if isinstance(data.get("agent"), dict) else {}
    data_dir = Path(str(data.get("data_dir") or "")).name
    task = data_dir if data_dir.lower() not in GENERIC_FOLDERS else str(data.get("exp_name") or "")
    return {"model": str(code.get("model") or "") if isinstance(code, dict) else "", "task": task}


def _mlab_layout(path: Path) -> dict[str, str]:
    if path.parent.name == "env_log" and len(path.parents) >= 4 and path.parents[1].name.isdigit():
        return {"task": path.parents[2].name, "model": path.parents[3].name}
    if match := FLAT_MLAB.match(path.stem):
        return {"task": match["task"], "model": match["model"]}
    return {}


def _name_of(path: Path) -> str:
    stem = path.stem
    for suffix in OWN_SUFFIXES:
        stem = stem.removesuffix(suffix)
    return path.parent.name if stem.lower() in ("journal", "trace", "main_log", "") else stem
