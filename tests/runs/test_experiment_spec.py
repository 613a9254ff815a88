"""ExperimentSpec: the experiment's configuration as one value, from the flat fields every door names."""

from __future__ import annotations

import hashlib
import json

import pytest

from leaderboard.models import Experiment, Run
from leaderboard.runs.artifacts import UploadError
from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment
from leaderboard.runs.job_runs import experiment_for
from leaderboard.runs.submission import submit_run
from leaderboard.trust.disclosures import Disclosures

pytestmark = pytest.mark.django_db

FLAT = {
    "competition": "spaceship-titanic", "agent_name": " aide ", "agent_version": "0.2", "model_name": "gpt-4o",
    "seed": 3, "hardware": "", "gpu_type": "A100", "gpu_count": 2, "cpu_count": 8, "memory_gb": 64.0,
    "time_limit_hours": 24.0, "notes": "n", "is_private": True, "team": None,
    "experiment_settings": {"steps": 500}, "disclosures": {"internet": True, "source_url": "https://example.org/a"},
}


def test_split_takes_the_experiment_fields_and_leaves_the_rest():
    spec, rest = ExperimentSpec.split(FLAT)
    assert rest == {"competition": "spaceship-titanic", "seed": 3, "notes": "n", "is_private": True, "team": None}
    assert spec == ExperimentSpec(
        agent_name="aide", model_name="gpt-4o", agent_version="0.2", gpu_type="A100", gpu_count=2, cpu_count=8,
        memory_gb=64.0, time_limit_hours=24.0, settings={"steps": 500},
        disclosures=Disclosures(internet="yes", source_url="https://example.org/a"),
    )


def test_a_disclosure_that_cannot_be_taken_is_an_upload_error_with_the_reason():
    with pytest.raises(UploadError, match="source_url must be an http"):
        ExperimentSpec.split({**FLAT, "disclosures": {"source_url": "javascript:alert(1)"}})


def test_an_uploads_content_hash_is_what_it_was_before_the_spec(alice, catalogue):
    """Repeats of uploads stored before stay repeats: the hashed key has the same names and values."""
    spec, rest = ExperimentSpec.split({**FLAT, "is_private": False, "notes": ""})
    run = submit_run(owner=alice, experiment=spec, self_reported_score=0.8,
                     **{k: v for k, v in rest.items() if k not in ("is_private", "notes", "team")})
    key = {"owner": alice.pk, "competition": "spaceship-titanic", "agent": "aide", "agent_version": "0.2",
           "model": "gpt-4o", "hardware": "", "gpu_type": "A100", "gpu_count": 2, "time_limit_hours": 24.0,
           "seed": 3, "settings": {"steps": 500}, "score": 0.8, "sample": None, "team": None,
           "disclosures": {"internet": "yes", "source_url": "https://example.org/a"}}
    assert run.content_hash == hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
    assert submit_run(owner=alice, experiment=spec, self_reported_score=0.8, competition="spaceship-titanic",
                      seed=3).pk == run.pk
    assert Run.objects.count() == 1


def test_the_experiment_holds_the_spec(alice):
    spec, _ = ExperimentSpec.split(FLAT)
    experiment = get_or_create_experiment(spec, owner=alice)
    assert (experiment.agent.name, experiment.agent.version, experiment.model.name) == ("aide", "0.2", "gpt-4o")
    assert experiment.hardware == "2x A100, 8 vCPU, 64 GB" and experiment.settings == {"steps": 500}
    assert (experiment.internet, experiment.source_url, experiment.owner) == ("yes", "https://example.org/a", alice)
    assert experiment.disclosed_by == Experiment.DisclosedBy.UPLOADER
    assert get_or_create_experiment(spec, owner=alice) == experiment


def test_a_jobs_experiment_is_the_runners_record_not_the_specs_statements(alice):
    stated, _ = ExperimentSpec.split({**FLAT, "hardware": "a big box"})
    experiment = experiment_for(owner=alice, spec=stated, network=None)
    assert experiment.hardware == "2x A100, 8 vCPU, 64 GB" and experiment.agent.version == ""
    assert experiment.internet == "no" and experiment.source_url == ""
    assert experiment.disclosed_by == Experiment.DisclosedBy.RUNNER
