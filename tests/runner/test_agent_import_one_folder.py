"""Two agents folders with the same ids never mix: the second import is refused naming both folders
and stores nothing, unless it replaces, and then every agent of the first folder is gone or, where a
job used it, kept and named (no Docker: --no-build)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from runner.agents.importer import import_agents
from runner.agents.mlebench import AgentFormatError
from runner.jobs.services import create_job
from runner.models import AgentDefinition
from tests.job_support import COMPETITION
from tests.mlebench_agent_support import CONFIG, make_agents_dir

# The second folder: a fork defining `probe` only, differently (so `probe/omega` would stay the first's).
FORK = CONFIG.split("probe/omega:")[0].replace("model: tiny", "model: huge")


def _import(path, **kwargs):
    return import_agents(path, build=False, log=lambda *a: None, **kwargs)


def _sources() -> dict[str, str]:
    return {row.name: row.package["source_dir"] for row in AgentDefinition.objects.filter(package_format="mlebench")}


def test_a_second_folder_with_the_same_ids_is_refused_naming_both_and_nothing_changes(db, tmp_path):
    first, fork = make_agents_dir(tmp_path / "first"), make_agents_dir(tmp_path / "fork", config_yaml=FORK)
    _import(first)
    before = _sources()
    with pytest.raises(AgentFormatError) as refused:
        _import(fork)
    assert str(first.resolve()) in str(refused.value) and str(fork.resolve()) in str(refused.value)
    assert "--replace" in str(refused.value) and "probe" in str(refused.value)
    assert _sources() == before == {"probe": str(first.resolve()), "probe/omega": str(first.resolve())}
    with pytest.raises(CommandError, match="nothing imported: .*--replace"):
        call_command("import_agents", str(fork), "--no-build")
    assert _sources() == before


def test_replacing_takes_every_agent_from_the_new_folder(db, tmp_path):
    first, fork = make_agents_dir(tmp_path / "first"), make_agents_dir(tmp_path / "fork", config_yaml=FORK)
    _import(first)
    report = _import(fork, replace=True)
    assert report.updated == ["probe"] and report.removed == ["probe/omega"] and report.kept == []
    assert _sources() == {"probe": str(fork.resolve())}


def test_replacing_keeps_an_agent_a_job_used_and_says_so(db, tmp_path, alice, job_world):
    first, fork = make_agents_dir(tmp_path / "first"), make_agents_dir(tmp_path / "fork", config_yaml=FORK)
    _import(first)
    create_job(user=alice, agent="probe/omega", competitions=[COMPETITION], time_limit_minutes=1,
               env={"MY_KEY": "a-secret"})
    report = _import(fork, replace=True)
    assert report.removed == [] and report.kept == ["probe/omega"]
    assert _sources() == {"probe": str(fork.resolve()), "probe/omega": str(first.resolve())}


def test_the_same_folder_imports_again_without_replacing(db, tmp_path):
    agents = make_agents_dir(tmp_path)
    _import(agents)
    assert sorted(_import(agents).unchanged) == ["probe", "probe/omega"]
