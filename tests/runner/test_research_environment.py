"""MLAgentBench's tasks compute their baselines in MLAgentBench's environment (runner.research.environment),
the same on the local backend (a venv of the pinned wheels, never the runner's own) and under Docker
(an image FROM mlebench-env holding the same wheels).

The tasks are MLAgentBench's own, read from a checkout named by MEDALBOARD_MLAGENTBENCH_DIR (the folder
holding MLAgentBench/benchmarks; its code is not part of this project), with small stand-ins made here
for the data their prepare.py downloads from Kaggle: vectorization (numpy; no data), amp-parkinsons-
disease-progression-prediction (pandas, scikit-learn; its own prepare.py run by MLAgentBench's own
prepare_task on a stand-in of the Kaggle download), feedback (imports torch; the ELLIPSE essays'
columns, split as its prepare.py splits them) and identify-contrails (trains a torch model on the
satellite bands; its own prepare.py run by prepare_task on a small stand-in of the Kaggle download: a
few records of the bands the starter reads, and masks). cifar10 cannot have a stand-in (torchvision
checks CIFAR-10's files by md5) and imdb's starter is a skeleton (`model = None`). Without a checkout
the tests are skipped; the environment's own tests (requirements, freeze) run everywhere.
"""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.models import Competition, ResearchTask
from runner.backends.local import LocalBackend
from runner.research import environment
from runner.research.baseline import compute_baseline
from tests.competitions.research_fixture import STARTER, build_task
from tests.conftest import REQUIRE_SERVICES

MLAGENTBENCH = os.environ.get("MEDALBOARD_MLAGENTBENCH_DIR", "")
AMP = "amp-parkinsons-disease-progression-prediction"
CONTRAILS = "identify-contrails"
TASKS = ("vectorization", AMP, "feedback", CONTRAILS)
DIMENSIONS = ["cohesion", "syntax", "vocabulary", "phraseology", "grammar", "conventions"]


@pytest.fixture(scope="module")
def benchmarks() -> Path:
    folder = Path(MLAGENTBENCH) / "MLAgentBench" / "benchmarks"
    if not MLAGENTBENCH or not folder.is_dir():
        pytest.skip("MEDALBOARD_MLAGENTBENCH_DIR does not name an MLAgentBench checkout")
    return folder


@pytest.fixture
def light(settings, tmp_path):
    """MLAgentBench's light environment, kept between test sessions and checkouts on this machine, beside the
    agents' wheelhouse (built once: minutes; keyed by the requirements' hash, so a change builds anew)."""
    settings.RESEARCH_ENVIRONMENT = "light"
    settings.RESEARCH_ENV_DIR = Path(
        os.environ.get("MEDALBOARD_TEST_RESEARCH_ENV_DIR", "/var/cache/medalboard/research-env")
    ).resolve()
    settings.RESEARCH_DIR = tmp_path / "stored"
    settings.RUNNER_WORK_DIR = tmp_path / "work"
    settings.RESEARCH_BASELINE_RUNS = 1
    settings.JOB_STOP_GRACE_S = 1
    return settings


# --- stand-ins for what each task's prepare.py downloads ---------------------------------------------


def copy_task(benchmarks: Path, slug: str, into: Path) -> Path:
    subprocess.run(["cp", "-r", str(benchmarks / slug), str(into / slug)], check=True)
    return into / slug


def prepare_task(task: Path, download: Path, tmp_path: Path) -> None:
    """MLAgentBench's own prepare_task (which runs the task's prepare.py from scripts/ and writes
    scripts/prepared), with a stand-in `kaggle` that hands over `download` as the competition's zip."""
    bin_dir = tmp_path / f"bin-{task.name}"
    bin_dir.mkdir()
    (bin_dir / "kaggle").write_text(f"#!/bin/sh\ncp {download} .\n")  # `kaggle competitions download -c ...`
    (bin_dir / "kaggle").chmod(0o755)
    prepare_task = (
        f"import sys; sys.path.insert(0, {str(Path(MLAGENTBENCH) / 'MLAgentBench')!r}); "
        f"import prepare_task; prepare_task.prepare_task({str(task)!r}, {sys.executable!r})"
    )
    done = subprocess.run(
        [sys.executable, "-c", prepare_task],
        input="\n",
        text=True,
        capture_output=True,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        timeout=120,
    )
    assert (task / "scripts" / "prepared").is_file(), done.stdout + done.stderr


def prepare_amp(task: Path, tmp_path: Path) -> None:
    """The Kaggle download: patients' visits with their UPDRS scores, peptides and proteins."""
    rng = random.Random(7)
    clinical, supplemental, peptides, proteins = [], [], [], []
    for patient in range(1000, 1014):  # 12 train (GroupKFold(8) needs 8) + the 2 prepare.py draws for test
        base = rng.randint(2, 12)
        for month in (0, 6, 12, 18, 24, 30, 36, 48):
            visit = f"{patient}_{month}"
            scores = [base + month // 12 + rng.randint(0, 3) for _ in range(4)]
            row = f"{visit},{patient},{month},{','.join(map(str, scores))},On"
            (clinical if month % 12 == 0 or patient % 2 else supplemental).append(row)
            peptides.append(f"{visit},{month},{patient},P01,PEPTIDE,{rng.uniform(1e4, 1e5):.1f}")
            proteins.append(f"{visit},{month},{patient},P01,{rng.uniform(1e4, 1e5):.1f}")
    header = "visit_id,patient_id,visit_month,updrs_1,updrs_2,updrs_3,updrs_4,upd23b_clinical_state_on_medication\n"
    download = tmp_path / f"{AMP}.zip"
    with zipfile.ZipFile(download, "w") as archive:
        archive.writestr("train_clinical_data.csv", header + "\n".join(clinical) + "\n")
        archive.writestr("supplemental_clinical_data.csv", header + "\n".join(supplemental) + "\n")
        archive.writestr(
            "train_peptides.csv",
            "visit_id,visit_month,patient_id,UniProt,Peptide,PeptideAbundance\n" + "\n".join(peptides) + "\n",
        )
        archive.writestr(
            "train_proteins.csv", "visit_id,visit_month,patient_id,UniProt,NPX\n" + "\n".join(proteins) + "\n"
        )
        archive.writestr("example_test_files/", "")
    prepare_task(task, download, tmp_path)


CONTRAILS_COMPETITION = "google-research-identify-contrails-reduce-global-warming"


def prepare_contrails(task: Path, tmp_path: Path) -> None:
    """The Kaggle download in its layout: a folder per record under train/, validation/ and test/ with
    the infrared bands (256 x 256 pixels x frames; only the three the starter reads: 11, 14, 15) and, but
    for test/, the human masks; sample_submission.csv. A contrail is a thin line that is warmer in band 15
    than in band 14, so the false colour the starter computes shows it. prepare.py moves validation/ to
    test/, keeps its masks in scripts/test_answer and removes them from test/."""
    import numpy as np

    rng = np.random.default_rng(11)
    rows, cols = np.mgrid[0:256, 0:256]
    download = tmp_path / f"{CONTRAILS_COMPETITION}.zip"
    with zipfile.ZipFile(download, "w", zipfile.ZIP_DEFLATED) as archive:
        records = {"train": 9, "validation": 3, "test": 1}  # 9: the starter's 90/10 split keeps a batch of 8
        for split, count in records.items():
            for _ in range(count):
                record = str(rng.integers(10**17, 9 * 10**18))
                slope, offset = rng.uniform(-1, 1), rng.uniform(60, 200)
                mask = (np.abs(rows - (slope * cols + offset)) < 3).astype(np.int32)[..., None]
                band14 = np.round(270 + 10 * np.sin(cols / 40.0) + rng.integers(0, 4, (256, 256)), 0)
                frames = lambda band: np.repeat(band[..., None], 5, axis=2).astype(np.float32)  # noqa: E731
                bands = {
                    "band_11.npy": frames(band14 - 1.0),
                    "band_14.npy": frames(band14),
                    "band_15.npy": frames(band14 - 2.0 + 3.5 * mask[..., 0]),
                }
                if split != "test":
                    bands["human_pixel_masks.npy"] = mask
                for name, array in bands.items():
                    buffer = io.BytesIO()
                    np.save(buffer, array)
                    archive.writestr(f"{split}/{record}/{name}", buffer.getvalue())
                if split == "test":
                    archive.writestr("sample_submission.csv", f"record_id,encoded_pixels\n{record},-\n")
        archive.writestr("train_metadata.json", "[]")
        archive.writestr("validation_metadata.json", "[]")
    prepare_task(task, download, tmp_path)
    answers = list((task / "scripts" / "test_answer").iterdir())
    assert len(answers) == records["validation"] and not list((task / "env" / "test").glob("*/human_pixel_masks.npy"))


def prepare_feedback(task: Path) -> None:
    """ELLIPSE's columns, split 98/2 and the answers kept apart as its prepare.py does (its download_dir,
    `benchmarks/feedback-prize-english-language-learning/env`, is not where prepare_task runs it)."""
    rng = random.Random(3)
    rows = [
        (
            f"T{i:04d}",
            " ".join(rng.choice(["essay", "words", "school", "learn"]) for _ in range(12)),
            [rng.choice([2.0, 2.5, 3.0, 3.5, 4.0]) for _ in DIMENSIONS],
        )
        for i in range(200)
    ]
    cut = int(len(rows) * 0.98)
    (task / "env" / "train.csv").write_text(
        "text_id,full_text,"
        + ",".join(DIMENSIONS)
        + "\n"
        + "".join(f"{i},{text},{','.join(map(str, y))}\n" for i, text, y in rows[:cut])
    )
    (task / "env" / "test.csv").write_text(
        "text_id,full_text\n" + "".join(f"{i},{text}\n" for i, text, _ in rows[cut:])
    )
    (task / "scripts" / "answer.csv").write_text(
        "text_id," + ",".join(DIMENSIONS) + "\n" + "".join(f"{i},{','.join(map(str, y))}\n" for i, _, y in rows[cut:])
    )
    (task / "scripts" / "prepared").write_text("success")


@pytest.fixture
def tasks(benchmarks, tmp_path, light) -> dict[str, ResearchTask]:
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    for slug in TASKS:
        copy_task(benchmarks, slug, folder)
    prepare_amp(folder / AMP, tmp_path)
    prepare_feedback(folder / "feedback")
    prepare_contrails(folder / CONTRAILS, tmp_path)
    call_command("import_research_tasks", str(folder), stdout=io.StringIO(), stderr=io.StringIO())
    return {task.competition.slug: task for task in ResearchTask.objects.select_related("competition")}


def baselines(tasks: dict[str, ResearchTask], backend) -> dict[str, tuple[str, float | None, str]]:
    found = {}
    for slug, task in tasks.items():
        ResearchTask.objects.filter(pk=task.pk).update(baseline_status=ResearchTask.Baseline.PENDING)
        status = compute_baseline(task.pk, backend=backend)
        task.refresh_from_db()
        found[slug] = (
            status,
            Competition.objects.get(pk=task.competition_id).baseline_score,
            task.baseline_error or task.baseline_log,
        )
    print(backend.name, {slug: (status, score) for slug, (status, score, _) in found.items()})  # -s shows them
    return found


def assert_computed(found: dict) -> None:
    for slug, (status, score, why) in found.items():
        assert status == ResearchTask.Baseline.DONE and score is not None, f"{slug}: {why[-600:]}"
    assert 0 < found["vectorization"][1] < 1e10  # seconds the starter's forward pass took (1e10: no submission)
    assert 0 < found[AMP][1] < 200  # SMAPE+1 in percent
    assert 0 < found["feedback"][1] < 3  # MCRMSE of random predictions on a 1-5 scale
    # the mean Dice of an untrained 1x1 convolution on the validation records, computed by the task's eval
    assert 0 <= found[CONTRAILS][1] <= 1
    assert "TrainSize: 8, ValidSize: 1" in found[CONTRAILS][2] and "Validation Dice Score" in found[CONTRAILS][2]


@pytest.mark.serial
def test_mlagentbench_tasks_compute_their_baselines_in_the_local_environment(db, tasks):
    found = baselines(tasks, LocalBackend(runner_name="gpuenv-test", site="test"))
    assert_computed(found)
    venv = environment.local_venv("light")
    assert venv.name.startswith("venv-light-") and Path(sys.executable).parent != venv / "bin"


@pytest.mark.docker
@pytest.mark.serial
def test_mlagentbench_tasks_compute_their_baselines_in_the_image_on_docker(db, tasks, mlebench_env):
    from runner.backends.docker import DockerBackend

    backend = DockerBackend(runner_name="gpuenv-test")
    try:
        tag = environment.docker_image("light", backend.client)
    except environment.EnvironmentUnavailable as exc:
        pytest.fail(str(exc)) if REQUIRE_SERVICES else pytest.skip(str(exc))
    assert_computed(baselines(tasks, backend))
    # the same wheels on both backends: the image's freeze is the local venv's
    local = (environment.local_venv("light") / environment.FREEZE).read_text().split()
    assert environment.image_freeze(backend.client, tag).split() == local
    assert "torch==2.13.0+cpu" in local and "numpy==1.26.4" in local


# --- the environment itself (no MLAgentBench checkout needed) -----------------------------------------

WHICH = (
    """import sys, numpy, sklearn, torch
print("python", sys.executable, "numpy", numpy.__version__, "torch", torch.__version__)
"""
    + STARTER
)


def pins(path: Path) -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return dict(line.split("==", 1) for line in lines if line)


def test_each_flavour_pins_every_line_and_agrees_with_mlebench_where_both_pin():
    mlebench = pins(Path("runner/agents/requirements/mlebench.txt"))
    full, light = pins(environment.requirements("full")), pins(environment.requirements("light"))
    for pinned in (full, light):
        assert pinned and all(version and " " not in version for version in pinned.values())
    shared = {name for name in full if name in mlebench}
    assert {name: full[name] for name in shared} == {name: mlebench[name] for name in shared}
    assert full["torch"] == "2.2.0"  # MLE-bench's, with CUDA
    # the light lock's own libraries are MLE-bench's pins; its dependencies are what pip resolved for
    # torch's CPU build (sympy >= 1.13.3, newer than MLE-bench's)
    assert {name: light[name] for name in ("numpy", "pandas", "scipy", "scikit-learn")} == {
        name: mlebench[name] for name in ("numpy", "pandas", "scipy", "scikit-learn")
    }
    assert light["torch"] == "2.13.0+cpu"


def starter_output(tmp_path, backend) -> str:
    """The baseline log of a task whose starter says which Python, numpy and torch it runs on."""
    build_task(tmp_path / "tasks", "which-python", starter=WHICH)
    call_command("import_research_tasks", str(tmp_path / "tasks" / "which-python"), stdout=io.StringIO())
    task = ResearchTask.objects.get(competition__slug="which-python")
    assert compute_baseline(task.pk, backend=backend) == ResearchTask.Baseline.DONE, task.baseline_error
    task.refresh_from_db()
    return task.baseline_log


@pytest.mark.serial
def test_a_local_starter_runs_in_the_venv_of_the_pinned_wheels_never_the_runners(db, tmp_path, light):
    output = starter_output(tmp_path, LocalBackend(runner_name="gpuenv-test", site="test"))
    venv = environment.local_venv("light")
    assert f"python {venv}/bin/python numpy 1.26.4 torch 2.13.0+cpu" in output
    assert sys.executable not in output  # the runner's venv (numpy 2) is not what the starter gets


@pytest.mark.docker
@pytest.mark.serial
def test_a_docker_starter_runs_in_the_image_of_the_same_wheels(db, tmp_path, light, mlebench_env):
    from runner.backends.docker import DockerBackend

    output = starter_output(tmp_path, DockerBackend(runner_name="gpuenv-test"))
    assert f"python {environment.VENV_IN_IMAGE}/bin/python numpy 1.26.4 torch 2.13.0+cpu" in output


@pytest.mark.serial
@pytest.mark.parametrize("backend_name", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_site_agent_on_a_research_task_works_in_the_same_environment(
    loopback_runner, alice, tmp_path, light, backend_name, request
):
    """MLAgentBench's agents work in the environment the starter ran in; the site's own agents do too."""
    from runner.jobs.services import create_job
    from runner.models import AgentDefinition

    light.RUNNER_WORK_DIR = tmp_path / "work"  # fast_jobs set its own
    build_task(tmp_path / "tasks", "which-python")
    call_command("import_research_tasks", str(tmp_path / "tasks"), "--baseline-score", "0.5", stdout=io.StringIO())
    AgentDefinition.objects.update_or_create(
        name="which-python",
        defaults={
            "image": "",
            "command": ["python3", "-c", "import sys, numpy; print('agent on', sys.executable, numpy.__version__)"],
        },
    )
    job = create_job(user=alice, agent="which-python", competitions=["which-python"], time_limit_minutes=1)
    task = job.tasks.get()
    if backend_name == "docker":
        from runner.backends.docker import DockerBackend

        request.getfixturevalue("mlebench_env")
        backend, python = DockerBackend(runner_name="gpuenv-test"), f"{environment.VENV_IN_IMAGE}/bin/python3"
    else:
        backend = LocalBackend(runner_name="gpuenv-test")
        python = f"{environment.local_venv('light')}/bin/python3"
    loopback_runner.run_graded(task.pk, backend)
    task.refresh_from_db()
    assert f"agent on {python} 1.26.4" in task.log_tail, task.log_tail
