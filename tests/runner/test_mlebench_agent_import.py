"""Importing agents packaged as MLE-bench packages them (no Docker: --no-build): ids, anchors and
merges, both kwargs types, secrets, privileged refused, bad folders refused with nothing stored,
re-import idempotent, a changed folder a new version that running jobs do not see."""

from __future__ import annotations

import json
import os
import re

import pytest
from django.core.management import CommandError, call_command

from runner.agents.importer import import_agents, packaged_variants
from runner.agents.mlebench import AgentFormatError, Variant, read_agents
from runner.jobs.registry import wanted_images
from runner.jobs.services import JobError, create_job
from runner.models import AgentDefinition
from tests.job_support import COMPETITION
from tests.mlebench_agent_support import CONFIG, make_agents_dir


def _import(path, **kwargs):
    return import_agents(path, build=False, log=lambda *a: None, **kwargs)


def test_variants_read_with_anchors_merges_and_both_kwargs_types(tmp_path):
    variants = {v.id: v for v in read_agents(make_agents_dir(tmp_path))}
    assert set(variants) == {"probe", "probe/omega"}  # vars, kwargs_common, the merged-in defaults: no agents
    probe, omega = variants["probe"], variants["probe/omega"]
    assert probe.argv({"MY_KEY": "k"}) == ["--steps", "7", "--mode", "fast", "--model", "tiny"]
    assert omega.argv({"MY_KEY": "k"}) == ["steps=7", "mode=fast", "agent.code.model=big"]
    assert probe.environment({"MY_KEY": "the-value"}) == {"STEP_LIMIT": "7", "PROBE_TOKEN": "the-value"}
    assert omega.environment({"MY_KEY": "v"}) == {"STEP_LIMIT": "7", "PROBE_TOKEN": "v", "EXTRA": "yes"}
    assert probe.secret_names() == ["MY_KEY"] and probe.start == "probe/start.sh"
    assert probe.version == omega.version and probe.image == omega.image  # one folder, one Dockerfile
    with pytest.raises(KeyError, match="MY_KEY"):
        probe.environment({})


def test_mlebench_own_agents_folder_is_read_as_mlebench_reads_it(tmp_path):
    """MLE-bench's aide config (its anchors, `defaults` merged into every variant), written out here."""
    agents = tmp_path / "agents"
    (agents / "aide").mkdir(parents=True)
    for name in ("Dockerfile", "start.sh"):
        (agents / "aide" / name).write_text("# stand-in\n")
    (agents / "aide" / "config.yaml").write_text(
        "vars:\n  step_count: &step_count 500\n  time_limit: &time_limit 86400\n"
        "defaults: &defaults\n  start: aide/start.sh\n  dockerfile: aide/Dockerfile\n  kwargs_type: omegaconf\n"
        "  env_vars: &env_vars\n    TIME_LIMIT_SECS: *time_limit\n    STEP_LIMIT: *step_count\n"
        "kwargs_common: &kwargs_common\n  agent.time_limit: *time_limit\n  copy_data: False\n"
        "aide/dev:\n  <<: *defaults\n  kwargs:\n    <<: *kwargs_common\n    agent.steps: 8\n"
        "  env_vars:\n    <<: *env_vars\n    OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n")
    (variant,) = read_agents(agents)
    assert variant.id == "aide/dev" and variant.kwargs_type == "omegaconf"
    assert variant.argv({}) == ["agent.time_limit=86400", "copy_data=False", "agent.steps=8"]
    assert variant.environment({"OPENAI_API_KEY": "sk"}) == {"TIME_LIMIT_SECS": "86400", "STEP_LIMIT": "500",
                                                             "OPENAI_API_KEY": "sk"}


def test_import_registers_both_ids_and_the_secret_is_required_by_jobs(db, tmp_path, alice, job_world):
    report = _import(make_agents_dir(tmp_path))
    assert sorted(report.created) == ["probe", "probe/omega"]
    omega = AgentDefinition.objects.get(name="probe/omega")
    assert omega.package_format == "mlebench" and omega.env_vars == ["MY_KEY"] and len(omega.version) == 64
    assert omega.image.startswith("mlebench-agent-probe:") and omega.command[:2] == ["bash", "/home/agent/start.sh"]
    assert Variant.from_config(omega.package).kwargs_type == "omegaconf"
    with pytest.raises(JobError, match="needs MY_KEY"):
        create_job(user=alice, agent="probe/omega", competitions=[COMPETITION], time_limit_minutes=1)
    job = create_job(user=alice, agent="probe/omega", competitions=[COMPETITION], time_limit_minutes=1,
                     env={"MY_KEY": "a-secret"})
    assert (job.agent_version, job.agent_image) == (omega.version, omega.image)


def test_reimport_is_idempotent_and_a_change_is_a_new_version(db, tmp_path, alice, job_world):
    agents = make_agents_dir(tmp_path)
    _import(agents)
    before = dict(AgentDefinition.objects.filter(package_format="mlebench").values_list("name", "version"))
    job = create_job(user=alice, agent="probe", competitions=[COMPETITION], time_limit_minutes=1,
                     env={"MY_KEY": "a-secret"})
    again = _import(agents)
    assert sorted(again.unchanged) == ["probe", "probe/omega"] and not again.created and not again.updated
    (agents / "probe" / "probe.py").write_text("print('a better agent')\n")
    changed = _import(agents)
    assert sorted(changed.updated) == ["probe", "probe/omega"]
    probe = AgentDefinition.objects.get(name="probe")
    assert probe.version != before["probe"] and probe.image.endswith(probe.version[:16])
    assert AgentDefinition.objects.filter(package_format="mlebench").count() == 2
    job.refresh_from_db()
    assert job.agent_version == before["probe"] and job.agent_package["version"] == before["probe"]
    assert {probe.image, job.agent_image} <= wanted_images()  # runners report the queued job's old image too


def test_privileged_is_refused_unless_the_site_allows_it(db, tmp_path, settings, alice, job_world):
    from types import SimpleNamespace

    from runner.agents.job_package import adapt
    from runner.backends import TOOLS_DIR, SandboxSpec
    from runner.backends.docker import PATHS

    agents = make_agents_dir(tmp_path, config_yaml=CONFIG + "  privileged: true\n")
    report = _import(agents)  # the agent that asks is left out, naming why; the folder's other one is stored
    assert report.created == ["probe"] and list(report.refused) == ["probe/omega"]
    assert re.search(r"config\.yaml: agent 'probe/omega': privileged .* refused", report.refused["probe/omega"])
    assert not AgentDefinition.objects.filter(name="probe/omega").exists()
    with pytest.raises(AgentFormatError, match="privileged"):
        read_agents(agents)  # without somewhere to put refusals, one is an error
    settings.AGENTS_ALLOW_PRIVILEGED = True
    assert _import(agents).created == ["probe/omega"]
    assert AgentDefinition.objects.get(name="probe/omega").package["privileged"] is True
    assert AgentDefinition.objects.get(name="probe").package["privileged"] is False
    job = create_job(user=alice, agent="probe/omega", competitions=[COMPETITION], time_limit_minutes=1,
                     env={"MY_KEY": "a-secret"})
    (tmp_path / "work").mkdir()
    spec = SandboxSpec(name="t", command=["x"], data_dir=tmp_path, workdir=tmp_path / "work", tools_dir=TOOLS_DIR)
    assert adapt(spec, job=job, task=job.tasks.get(), backend=SimpleNamespace(name="docker"), paths=PATHS).privileged
    settings.AGENTS_ALLOW_PRIVILEGED = False  # the site changed its mind: the job's sandbox is refused
    with pytest.raises(RuntimeError, match="privileged container, which this site refuses"):
        adapt(spec, job=job, task=job.tasks.get(), backend=SimpleNamespace(name="docker"), paths=PATHS)
    only = make_agents_dir(tmp_path / "only", config_yaml="solo:\n  start: probe/start.sh\n"
                                                          "  dockerfile: probe/Dockerfile\n  privileged: true\n")
    with pytest.raises(AgentFormatError, match="every agent was refused: .*'solo': privileged"):
        _import(only)


# A folder shaped like MLE-bench's own agents/ (its four agents' config.yaml shapes, in our words):
# aide's vars/defaults/kwargs_common anchors merged into omegaconf variants with a provider key as a
# secret, a bare agent with no kwargs, an argparse agent with a WORKDIR of its own, a privileged one.
MLEBENCH_SHAPED = {
    "aide": """\
vars:
  steps: &steps 40
  limit: &limit 3600
defaults: &defaults
  start: aide/start.sh
  dockerfile: aide/Dockerfile
  kwargs_type: omegaconf
  env_vars: &env_vars
    TIME_LIMIT_SECS: *limit
    STEP_LIMIT: *steps
kwargs_common: &kwargs_common
  agent.search.debug_prob: 1
  copy_data: False
aide:
  <<: *defaults
  kwargs:
    <<: *kwargs_common
    agent.code.model: gpt-4o
    agent.steps: *steps
  env_vars:
    <<: *env_vars
    OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}
aide/claude:
  <<: *defaults
  kwargs:
    <<: *kwargs_common
    agent.code.model: claude-3-5-sonnet
    agent.steps: 8
  env_vars:
    <<: *env_vars
    ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}
    OBFUSCATE: "true"
""",
    "dummy": "dummy:\n  start: dummy/start.sh\n  dockerfile: dummy/Dockerfile\n",
    "mlagentbench": """\
vars:
  limit: &limit 7200
mlagentbench:
  start: mlagentbench/start.sh
  dockerfile: mlagentbench/Dockerfile
  kwargs_type: argparse
  kwargs:
    llm-name: gpt-4o
    max-time: *limit
    max-retries: 3
  env_vars:
    OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}
    TIME_LIMIT_SECS: *limit
""",
    "opendevin": """\
opendevin:
  start: opendevin/start.sh
  dockerfile: opendevin/Dockerfile
  kwargs_type: argparse
  kwargs:
    agent: CodeActAgent
    shm_size: "1G"
  env_vars:
    OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}
  privileged: true
""",
}


def test_a_folder_shaped_like_mlebench_agents_imports_all_but_the_privileged_one(db, tmp_path, capsys, settings):
    agents = tmp_path / "agents"
    for name, config in MLEBENCH_SHAPED.items():
        (agents / name).mkdir(parents=True)
        (agents / name / "config.yaml").write_text(config)
        for file in ("Dockerfile", "start.sh", "requirements.txt"):
            (agents / name / file).write_text("# stand-in\n")
    for loose in ("README.md", "registry.py", ".shared_env"):  # MLE-bench's own files beside the agents
        (agents / loose).write_text("# not an agent\n")
    call_command("import_agents", str(agents), "--no-build")
    out = capsys.readouterr()
    assert json.loads(out.out)["created"] == ["aide", "aide/claude", "dummy", "mlagentbench"]
    assert "not imported: " in out.err and "agent 'opendevin': privileged containers are refused" in out.err
    rows = {a.name: a for a in AgentDefinition.objects.filter(package_format="mlebench")}
    aide, claude = Variant.from_config(rows["aide"].package), Variant.from_config(rows["aide/claude"].package)
    assert aide.argv({"OPENAI_API_KEY": "k"}) == ["agent.search.debug_prob=1", "copy_data=False",
                                                  "agent.code.model=gpt-4o", "agent.steps=40"]
    assert claude.environment({"ANTHROPIC_API_KEY": "a"}) == {
        "TIME_LIMIT_SECS": "3600", "STEP_LIMIT": "40", "ANTHROPIC_API_KEY": "a", "OBFUSCATE": "true"}
    assert rows["aide"].env_vars == ["OPENAI_API_KEY"] and rows["aide/claude"].env_vars == ["ANTHROPIC_API_KEY"]
    assert rows["aide"].image == rows["aide/claude"].image != rows["dummy"].image
    dummy = Variant.from_config(rows["dummy"].package)
    assert dummy.argv({}) == [] and dummy.environment({}) == {} and rows["dummy"].env_vars == []
    assert Variant.from_config(rows["mlagentbench"].package).argv({"OPENAI_API_KEY": "k"}) == [
        "--llm-name", "gpt-4o", "--max-time", "7200", "--max-retries", "3"]
    settings.AGENTS_ALLOW_PRIVILEGED = True
    call_command("import_agents", str(agents), "--no-build")
    report = json.loads(capsys.readouterr().out)
    assert report["created"] == ["opendevin"] and len(report["unchanged"]) == 4 and not report["refused"]
    assert Variant.from_config(AgentDefinition.objects.get(name="opendevin").package).argv({"OPENAI_API_KEY": "k"}) \
        == ["--agent", "CodeActAgent", "--shm_size", "1G"]


def _break(agents, how: str) -> str:
    """Spoil the probe folder one way; the text the refusal must contain."""
    probe = agents / "probe"
    config = probe / "config.yaml"
    if how == "no dockerfile":
        (probe / "Dockerfile").unlink()
        return "Dockerfile does not exist"
    if how == "no start script":
        config.write_text(CONFIG.replace("probe/start.sh", "probe/missing.sh"))
        return "missing.sh does not exist"
    if how == "yaml error":
        config.write_text(CONFIG + "  kwargs: [unclosed\n")
        return "not valid YAML"
    if how == "unknown kwargs_type":
        config.write_text(CONFIG.replace("kwargs_type: omegaconf", "kwargs_type: hydra"))
        return "unknown kwargs_type 'hydra'"
    if how == "kwargs without a type":
        config.write_text(CONFIG.replace("  kwargs_type: argparse\n", ""))
        return "kwargs are given without a kwargs_type"
    if how == "dotdot":
        config.write_text(CONFIG.replace("dockerfile: probe/Dockerfile", "dockerfile: ../outside/Dockerfile"))
        return "must stay inside the agents folder"
    if how == "absolute":
        config.write_text(CONFIG.replace("start: probe/start.sh", "start: /etc/passwd"))
        return "must stay inside the agents folder"
    if how == "link out":
        (probe / "secrets").symlink_to("/etc")
        return "outside the agent's folder"
    if how == "linked start":
        (probe / "start.sh").unlink()
        (probe / "start.sh").symlink_to(probe / "probe.py")
        return "is a link"
    if how == "fifo":
        os.mkfifo(probe / "pipe")
        return "not a regular file, folder or link"
    if how == "too big":
        (probe / "weights.bin").write_bytes(b"\0" * 5000)
        return "larger than 4096 bytes"
    if how == "nested kwarg":
        config.write_text(CONFIG.replace("model: tiny", "model: [a, b]"))
        return "values must be plain text"
    if how == "merge bomb":
        levels = "".join(f"l{i}: &l{i}\n  <<: [*l{i - 1}, *l{i - 1}]\n  k{i}: 1\n" for i in range(1, 60))
        config.write_text(CONFIG + "l0: &l0 {a: 1, b: 2}\n" + levels)
        return "merge keys expand to more than"
    if how == "fifo config":
        config.unlink()
        os.mkfifo(config)
        return "config.yaml: not a regular file"
    if how == "missing start key":
        config.write_text("broken:\n  dockerfile: probe/Dockerfile\n")
        return "missing `start`"
    raise AssertionError(how)


BREAKS = ["no dockerfile", "no start script", "yaml error", "unknown kwargs_type", "kwargs without a type", "dotdot",
          "absolute", "link out", "linked start", "fifo", "too big", "nested kwarg", "missing start key",
          "merge bomb", "fifo config"]


@pytest.mark.parametrize("how", BREAKS)
def test_a_bad_folder_is_refused_naming_the_file_and_nothing_is_stored(db, tmp_path, settings, how):
    settings.AGENTS_MAX_FOLDER_BYTES = 4096
    agents = make_agents_dir(tmp_path)
    good = agents / "other"  # a good second agent: stored only if everything is good
    good.mkdir()
    for name in ("Dockerfile", "start.sh"):
        (good / name).write_text("# fine\n")
    (good / "config.yaml").write_text("other:\n  start: other/start.sh\n  dockerfile: other/Dockerfile\n")
    expected = _break(agents, how)
    with pytest.raises(AgentFormatError) as refused:
        _import(agents)
    assert expected in str(refused.value) and str(agents / "probe") in str(refused.value)
    assert not AgentDefinition.objects.filter(package_format="mlebench").exists()


def test_recursive_anchors_outside_agents_are_read_without_hanging(tmp_path):
    agents = make_agents_dir(tmp_path, config_yaml=CONFIG + "loop: &loop [*loop, 1]\nmap: &map {self: *map}\n")
    assert {v.id for v in read_agents(agents)} == {"probe", "probe/omega"}


def test_the_command_refuses_with_the_reason_and_ids_of_site_agents_are_not_taken(db, tmp_path):
    with pytest.raises(CommandError, match="nothing imported: .*no \\*/config.yaml"):
        call_command("import_agents", str(tmp_path), "--no-build")
    agents = make_agents_dir(tmp_path)
    (agents / "probe" / "config.yaml").write_text(CONFIG.replace("probe/omega:", "baseline:"))
    from runner.jobs.services import ensure_builtin_agents

    ensure_builtin_agents()
    with pytest.raises(CommandError, match="already used by agents defined on the site: baseline"):
        call_command("import_agents", str(agents), "--no-build")
    assert AgentDefinition.objects.get(name="baseline").builtin


def test_build_agent_images_refuses_unknown_ids_and_a_folder_changed_since_import(db, tmp_path):
    agents = make_agents_dir(tmp_path)
    _import(agents)
    assert [v.id for v in packaged_variants(["probe"])] == ["probe"]
    with pytest.raises(CommandError, match="not imported MLE-bench agents: nope"):
        call_command("build_agent_images", "nope")
    (agents / "probe" / "start.sh").write_text("#!/bin/bash\necho changed\n")
    with pytest.raises(CommandError, match="no longer holds the imported version"):
        call_command("build_agent_images", "probe")


def test_the_sandbox_spec_of_a_packaged_agent_and_local_runners_refuse_it(db, tmp_path, alice, job_world):
    from types import SimpleNamespace

    from runner.agents.images import SEED_HOME
    from runner.agents.job_package import adapt
    from runner.backends import TOOLS_DIR, SandboxSpec
    from runner.backends.docker import PATHS

    _import(make_agents_dir(tmp_path))
    job = create_job(user=alice, agent="probe", competitions=[COMPETITION], time_limit_minutes=1.5,
                     env={"MY_KEY": "a-secret"})
    (tmp_path / "work").mkdir()
    spec = SandboxSpec(name="t", command=["x"], data_dir=tmp_path, workdir=tmp_path / "work", tools_dir=TOOLS_DIR,
                       env={"SEED": "0"}, time_limit_s=90)
    adapted = adapt(spec, job=job, task=job.tasks.get(), backend=SimpleNamespace(name="docker"), paths=PATHS)
    assert adapted.command == ["/usr/bin/python3", "/opt/medalboard/sandbox_init.py", "--seed-home", SEED_HOME,
                               "--user", "nonroot", "--", "bash", "/home/agent/start.sh",
                               "--steps", "7", "--mode", "fast", "--model", "tiny"]
    assert adapted.env["PROBE_TOKEN"] == "a-secret" and adapted.env["COMPETITION_ID"] == COMPETITION
    assert adapted.env["SEED"] == "0" and adapted.home_dir == tmp_path / "work" / "home"
    instructions = (adapted.home_dir / "instructions.txt").read_text()
    assert "1 minute, 30 seconds of wall-clock time in all (90 seconds)" in instructions
    assert os.access(adapted.home_dir / "validate_submission.sh", os.X_OK)
    with pytest.raises(RuntimeError, match="runs only on Docker runners, not local"):
        adapt(spec, job=job, task=job.tasks.get(), backend=SimpleNamespace(name="local"), paths=PATHS)
    builtin = create_job(user=alice, agent="scripted", competitions=[COMPETITION], time_limit_minutes=1)
    assert adapt(spec, job=builtin, task=builtin.tasks.get(), backend=SimpleNamespace(name="docker"),
                 paths=PATHS) is spec


def test_submit_job_gives_secrets_from_its_own_environment(db, tmp_path, alice, job_world, monkeypatch,
                                                           django_capture_on_commit_callbacks):
    from runner.host.secrets import unseal
    from runner.models import Job

    _import(make_agents_dir(tmp_path))
    command = ["submit_job", "--agent", "probe/omega", "--competition", COMPETITION, "--time-limit-minutes", "1",
               "--user", "alice", "--secret", "MY_KEY"]
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(CommandError, match="environment lacks: MY_KEY"):
        call_command(*command)
    monkeypatch.setenv("MY_KEY", "from-the-environment")
    with django_capture_on_commit_callbacks(execute=False):
        call_command(*command)
    job = Job.objects.get(agent__name="probe/omega")
    assert unseal(job.sealed_env) == {"MY_KEY": "from-the-environment"}
    given = [*command[:-2], "--secret", "MY_KEY=given-on-the-line", "--secret", "HF_TOKEN=hf_another=value"]
    with django_capture_on_commit_callbacks(execute=False):
        call_command(*given)  # NAME=VALUE, repeated; a value may hold "="
    latest = Job.objects.filter(agent__name="probe/omega").latest("pk")
    assert unseal(latest.sealed_env) == {"MY_KEY": "given-on-the-line", "HF_TOKEN": "hf_another=value"}


def test_the_docker_container_of_a_packaged_agent_gets_home_beneath_the_other_mounts(tmp_path):
    from runner.backends import SandboxSpec
    from runner.backends.docker import DockerBackend

    spec = SandboxSpec(name="t", command=["x"], data_dir=tmp_path, workdir=tmp_path / "w", tools_dir=tmp_path,
                       home_dir=tmp_path / "w" / "home", privileged=True)
    kwargs = DockerBackend(client=object(), runner_name="r").container_kwargs(spec)
    targets = [m["Target"] for m in kwargs["mounts"]]
    assert targets == ["/home", "/home/data", "/home/submission", "/home/logs", "/home/code", "/opt/medalboard"]
    assert kwargs["mounts"][0]["Source"] == str((tmp_path / "w" / "home").resolve()) and kwargs["privileged"]
    plain = DockerBackend(client=object(), runner_name="r").container_kwargs(
        SandboxSpec(name="t", command=["x"], data_dir=tmp_path, workdir=tmp_path / "w", tools_dir=tmp_path))
    assert "/home" not in [m["Target"] for m in plain["mounts"]] and "privileged" not in plain


def test_the_readmes_sample_config_reads_as_it_says(tmp_path, settings):
    from pathlib import Path

    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    section = readme.split("### Running agents\n", 1)[1].split("\n### ", 1)[0]
    for needed in ("**Package**", "**Import**", "**configure the upstreams**", "**run**", "**Read its cost**",
                   "MEDALBOARD_LLM_UPSTREAMS=", "submit_job", "--secret", "import_agents", "metered"):
        assert needed in section, needed
    config = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    agent = tmp_path / "agents" / "myagent"
    agent.mkdir(parents=True)
    (agent / "config.yaml").write_text(config)
    for name in ("Dockerfile", "start.sh"):
        (agent / name).write_text("# stand-in\n")
    (variant,) = read_agents(tmp_path / "agents")
    assert variant.id == "myagent/dev" and variant.secret_names() == ["OPENAI_API_KEY"]
    assert variant.argv({"OPENAI_API_KEY": "sk-x"}) == ["agent.steps=8", "agent.code.model=gpt-4o"]
