"""aideml's `aide` command, with two adjustments for a sandbox that reaches models only through
Medalboard's gateway and keeps only /home/{logs,code,submission}.

- aideml 0.2.2 sends OpenAI's own models (gpt-*, o*) to https://api.openai.com/v1 whatever the
  environment says; here that address is unreachable, so its client takes OPENAI_BASE_URL when set.
- aideml names each run's folders `<index>-<exp_name>`; its journal.json (the solution tree that
  Medalboard's replay reads) is written straight into LOGS_DIR instead, where it is kept, and the
  workspace's `submission/` is SUBMISSION_DIR, so a solution's ./submission/submission.csv is the
  one graded.
- aideml keeps one submission.csv, the last solution's; each node's is kept here as it is written
  and, after every step, the best good node's is put back in SUBMISSION_DIR, so what is graded (and
  snapshotted live) is the best solution so far, as MLE-bench's fork of AIDE does.
- A refusal by the gateway that waiting cannot change (no LLM reachable from the runner, a wrong
  token, the job's token or cost limit reached) stops AIDE with the gateway's reason, where aideml
  would retry it until the time limit.

Everything else (arguments, search, prompts) is aideml's.
"""

import os
import shutil
import sys
from pathlib import Path

import aide.backend.backend_anthropic as anthropic_backend
import aide.backend.backend_openai as openai_backend
import aide.run as aide_run

FINAL_REFUSALS = {"medalboard_no_upstream", "medalboard_auth", "medalboard_limit"}


class GatewayRefused(RuntimeError):
    """The gateway refused a call for a reason that retrying does not change."""


def _refusal(exc: Exception) -> str:
    """The gateway's error type in an SDK's status error (its body is the JSON error or its `error`)."""
    body = getattr(exc, "body", None)
    if not isinstance(body, dict):
        return ""
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(error.get("type") or "")


def _stop_on_final_refusals(backoff_create):
    def create(create_fn, retry_exceptions, *args, **kwargs):
        def once(*a, **k):
            try:
                return create_fn(*a, **k)
            except Exception as exc:
                if _refusal(exc) in FINAL_REFUSALS:
                    raise GatewayRefused(f"the model gateway refused the call: {exc}") from None
                raise

        return backoff_create(once, retry_exceptions, *args, **kwargs)

    return create


def _kept_folders(load_cfg):
    def load():
        cfg = load_cfg()
        cfg.log_dir = Path(os.environ["LOGS_DIR"]).resolve()
        workspace = Path(cfg.workspace_dir)
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / "submission").symlink_to(os.environ["SUBMISSION_DIR"], target_is_directory=True)
        return cfg

    return load


def _keep_best_submission(save_run):
    live = Path(os.environ["SUBMISSION_DIR"]) / "submission.csv"
    kept = Path(os.environ.get("AGENT_DIR", ".")) / "node_submissions"
    seen = {"stamp": None}  # the live file as last left here: unchanged means the node wrote none

    def save(cfg, journal):
        save_run(cfg, journal)
        kept.mkdir(exist_ok=True)
        if journal.nodes and live.is_file() and _stamp(live) != seen["stamp"]:
            shutil.copyfile(live, kept / f"{journal.nodes[-1].id}.csv")
        best = journal.get_best_node(only_good=True)
        if best is not None and (kept / f"{best.id}.csv").is_file():
            partial = live.with_name("submission.csv.partial")
            shutil.copyfile(kept / f"{best.id}.csv", partial)
            os.replace(partial, live)
        seen["stamp"] = _stamp(live) if live.is_file() else None

    return save


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_mtime_ns, info.st_size


def main() -> None:
    if os.environ.get("OPENAI_BASE_URL"):
        openai_backend.OPENAI_BASE_URL = os.environ["OPENAI_BASE_URL"]
    aide_run.load_cfg = _kept_folders(aide_run.load_cfg)
    aide_run.save_run = _keep_best_submission(aide_run.save_run)
    for backend in (openai_backend, anthropic_backend):
        backend.backoff_create = _stop_on_final_refusals(backend.backoff_create)
    sys.argv[0] = "aide"
    aide_run.run()


if __name__ == "__main__":
    main()
