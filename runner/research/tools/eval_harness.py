"""Score one workspace with a research task's own eval.py, inside the grading sandbox.

    python eval_harness.py SCRIPTS_DIR WORKSPACE_DIR RESULT_FILE

Standalone (it runs in the sandbox's Python, not the project's): imports eval.py from SCRIPTS_DIR
with that folder first on sys.path (as MLAgentBench imports it from the task's scripts/), from
inside the workspace (the current directory), calls get_score(WORKSPACE_DIR) and writes
{"score": x} or {"error": "..."} as JSON to RESULT_FILE. The eval's own output and traceback go to
the sandbox's log, which the runner keeps apart from every page.
"""

import importlib.util
import json
import math
import os
import sys
import traceback


def score(scripts: str, workspace: str) -> dict:
    sys.path.insert(0, scripts)
    os.chdir(workspace)
    spec = importlib.util.spec_from_file_location("eval", os.path.join(scripts, "eval.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval"] = module
    spec.loader.exec_module(module)
    value = float(module.get_score(workspace))
    if not math.isfinite(value):
        return {"error": f"get_score returned {value}, not a finite number"}
    return {"score": value}


def main(argv: list) -> int:
    scripts, workspace, result_file = argv[1:4]
    try:
        result = score(scripts, workspace)
    except BaseException as exc:  # noqa: BLE001 - whatever the eval raises is its verdict on the workspace
        traceback.print_exc()
        message = str(exc).splitlines()[0][:300] if str(exc) else ""
        result = {"error": f"{exc.__class__.__name__}: {message}" if message else exc.__class__.__name__}
    with open(result_file, "w") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
