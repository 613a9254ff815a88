import json
import zipfile

from leaderboard.trajectories.importers import detect, read_trajectories
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

EVAL = TRAJECTORIES_DIR / "inspect" / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
JSON_LOG = TRAJECTORIES_DIR / "inspect" / "log_read_sample.json"
STRUCTURAL = {"span_begin", "span_end", "step", "state", "store", "subtask"}


def eval_samples():
    with zipfile.ZipFile(EVAL) as zf:
        return [json.loads(zf.read(n)) for n in zf.namelist() if n.startswith("samples/")]


def expected_steps(sample):
    """Steps per event: a tool call is an action plus its result, structural events are not steps."""
    events = [e["event"] for e in sample["events"] if e["event"] not in STRUCTURAL]
    return len(events) + events.count("tool")


def test_detects_both_layouts():
    assert detect(EVAL) == "inspect"
    assert detect(JSON_LOG) == "inspect"


def test_each_eval_sample_is_one_trajectory(db):
    samples = {str(s["id"]): s for s in eval_samples()}
    assert len(samples) == 10
    saved = import_all(EVAL)
    assert len(saved) == len(samples)
    for run, steps in saved:
        sample = samples[str(steps[0].data["sample_id"])]
        assert run.n_steps == len(steps) == expected_steps(sample)
        model_events = [e for e in sample["events"] if e["event"] == "model"]
        assert sum(s.kind == "llm" for s in steps) == len(model_events)
        usage = sample["model_usage"]["openai/gpt-4o-mini"]
        assert (run.tokens_in, run.tokens_out) == (usage["input_tokens"], usage["output_tokens"])
        assert run.task_name == "popularity"


def test_sample_meta_and_order():
    ids = [p.meta.sample_id for p in read_trajectories(EVAL)]
    assert ids == [str(i) for i in sorted(int(s["id"]) for s in eval_samples())]


def test_json_log_model_and_score_events(db):
    log = json.loads(JSON_LOG.read_text())
    [sample] = log["samples"]
    [(run, steps)] = import_all(JSON_LOG)
    assert run.n_steps == expected_steps(sample)
    assert [s.kind for s in steps] == ["message", "llm", "score"]
    llm = steps[1]
    assert llm.text == sample["output"]["choices"][0]["message"]["content"]
    assert llm.data["model"] == "ollama/gemma3"
    assert steps[2].score == 1.0 and steps[2].data["value"] == "C"  # Inspect's CORRECT
    assert steps[0].text.startswith("Is the following statement")  # attachment resolved
    assert run.duration_s == sample["total_time"]
