"""The check of an agent's Dockerfile (runner.agents.dockerfile): every way a build could reach outside
its sandbox, in the spellings the builders accept, is refused naming its line; what MLE-bench's
Dockerfiles do passes. Reading and importing a folder refuses it before anything is built or stored."""

from __future__ import annotations

import pytest

from runner.agents.dockerfile import DockerfileRefused, check, check_file, external_images

BASES = {"mlebench-env", "medalboard-agent:bookworm"}
HEAD = "FROM mlebench-env\n"


def refused(text: str) -> list[str]:
    return check(text, allowed_bases=BASES)


@pytest.mark.parametrize("text", [
    # MLE-bench's habits: build args, ENV, mkdir, COPY with flags, WORKDIR, the image's own settings
    HEAD + "ARG AGENT_DIR\nENV AGENT_DIR=${AGENT_DIR}\nRUN mkdir ${AGENT_DIR} && \\\n    echo ok\n"
           "COPY --chown=nonroot:nonroot --chmod=755 . ${AGENT_DIR}\nWORKDIR ${AGENT_DIR}\n"
           "USER root\nENTRYPOINT [\"bash\"]\nCMD [\"x\"]\nEXPOSE 80\nHEALTHCHECK CMD true\nSTOPSIGNAL SIGINT\n"
           "LABEL maintainer=\"someone\" description=\"uses $HOME\"\nSHELL [\"/bin/bash\", \"-c\"]\n",
    HEAD + "ADD requirements.txt archive.tar.gz /home/agent/\nADD --chown=1000 [\"a b.txt\", \"/x/\"]\n",
    "FROM mlebench-env AS Build\nRUN make\nFROM medalboard-agent:bookworm\nCOPY --from=build /a /b\n"
    "COPY --from=0 /a /b\nRUN --mount=type=bind,from=BUILD,target=/b --mount=type=tmpfs,target=/t x\n"
    "RUN --mount=target=/ctx x\nRUN --network=none x\n",
    "FROM mlebench-env:latest\nFROM scratch\n",
    HEAD + "COPY <<EOF /home/agent/notes.txt\nhello from a heredoc\nEOF\n",
    "# a comment first: what follows is no directive\n# syntax=docker/dockerfile:1\n" + HEAD,
    "\ufeff# escape=`\n" + HEAD + "RUN echo one `\n    two\n",
])
def test_what_mlebench_dockerfiles_do_passes(text):
    assert refused(text) == []


@pytest.mark.parametrize("text, line, why", [
    (HEAD + "ADD http://127.0.0.1:8000/payload /payload\n", 2, "would fetch it from the network"),
    (HEAD + "add https://example.com/x /x\n", 2, "would fetch it"),
    (HEAD + "AdD HTTPS://EXAMPLE.COM/x /x\n", 2, "would fetch it"),
    (HEAD + "ADD --chmod=755 --chown=1:1 http://e/x /x\n", 2, "would fetch it"),
    (HEAD + "ADD ./local.txt ftp://e/x /x\n", 2, "would fetch it"),
    (HEAD + 'ADD ["http://e/x", "/x"]\n', 2, "would fetch it"),
    (HEAD + 'ADD "http://e/x" /x\n', 2, "would fetch it"),
    (HEAD + "ADD h\\ttp://e/x /x\n", 2, "would fetch it"),
    (HEAD + "ADD git@github.com:someone/repo.git /repo\n", 2, "would fetch it"),
    (HEAD + "ADD --keep-git-dir=true https://github.com/a/b.git /b\n", 2, "ADD --keep-git-dir is refused"),
    (HEAD + "ADD ssh://git@host/repo /repo\n", 2, "would fetch it"),
    (HEAD + "ARG U=http://e\nADD ${U}/x /x\n", 3, "a variable in an ADD source could be a URL"),
    (HEAD + "ADD \\\n  # a comment inside the continuation\n\n  http://e/x /x\n", 2, "would fetch it"),
    (HEAD + "ADD\thttp://e/x\t/x\n", 2, "would fetch it"),
    (HEAD.replace("\n", "\r\n") + "ADD http://e/x /x\r\n", 2, "would fetch it"),
    ("# escape=`\n" + HEAD + "RUN echo \\\nADD http://e/x /x\n", 4, "would fetch it"),
    ("#ESCAPE = `\n" + HEAD + "ADD `\n  http://e/x /x\n", 3, "would fetch it"),
    # the daemon's builder knows no heredocs: their lines are instructions to it
    (HEAD + "RUN cat <<EOF\nADD http://e/x /x\nEOF\n", 3, "would fetch it"),
    (HEAD + "RUN cat <<'E O F'\nx\nE O F\n", 2, "name a heredoc with a plain word"),
    # a BuildKit reading: the line after the heredoc is an instruction, whatever the body ends with
    (HEAD + "RUN <<EOF\necho \\\nEOF\nADD http://e/x /x\n", 5, "would fetch it"),
    # where Python's idea of a line or of whitespace is not Go's, the builder's is the one that counts
    (HEAD + "RUN echo \\\u00a0\nADD http://e/x /x\n", 3, "would fetch it"),  # no continuation: \xa0 is no tab
    (HEAD + "RUN echo \\\n\x1c\nADD http://e/x /x\n", 4, "would fetch it"),  # \x1c is no blank line to Go
    (HEAD + "RUN echo \\\u2028\nADD http://e/x /x\n", 3, "would fetch it"),  # \u2028 ends no line to Go
    ("#escape\f=`\n" + HEAD, 1, "a parser directive spelled with a form feed"),
    ("FROM alpine\n", 1, "not an earlier stage of this Dockerfile nor an allowed base"),
    ("FROM docker.io/library/mlebench-env\n", 1, "never pulls an image"),
    ("FROM mlebench-env@sha256:" + "a" * 64 + "\n", 1, "never pulls"),
    ("FROM medalboard-agent\n", 1, "never pulls"),  # :latest, not the site's tag
    ("ARG BASE=alpine\nFROM ${BASE}\n", 2, "named by a variable"),
    ("FROM --platform=linux/arm64 mlebench-env\n", 1, "FROM --platform is refused"),
    ("FROM mlebench-env\nFROM later\nFROM mlebench-env AS later\n", 2, "never pulls"),
    (HEAD + "COPY --from=alpine:3 /etc/passwd /x\n", 2, "COPY --from alpine:3"),
    (HEAD + "copy --FROM=python /x /y\n", 2, "COPY --from python"),
    (HEAD + "COPY --from=1 /x /y\n", 2, "COPY --from 1"),
    (HEAD + "COPY --from=$IMG /x /y\n", 2, "named by a variable"),
    (HEAD + "RUN --mount=type=secret,id=token cat /run/secrets/token\n", 2, "type=secret reaches the building host"),
    (HEAD + "RUN --mount=type=ssh git clone x\n", 2, "type=ssh"),
    (HEAD + "RUN --mount=TYPE=Cache,target=/root/.cache pip install x\n", 2, "type=cache"),
    (HEAD + 'RUN --mount="type=secret,id=a" x\n', 2, "type=secret"),
    (HEAD + "RUN --mount=type=bind,from=alpine,target=/a x\n", 2, "RUN --mount from alpine"),
    (HEAD + "RUN --network=host curl http://e\n", 2, "RUN --network=host is refused"),
    (HEAD + "RUN --network=default curl http://e\n", 2, "RUN --network=default is refused"),
    (HEAD + "RUN --security=insecure x\n", 2, "RUN --security=insecure is refused"),
    (HEAD + "ONBUILD RUN echo later\n", 2, "ONBUILD runs its instruction in a later build"),
    (HEAD + "onbuild ADD http://e/x /x\n", 2, "ONBUILD"),
    (HEAD + "ONBUİLD RUN x\n", 2, "ONBUILD spelled with letters other than ASCII"),
    (HEAD + "VOLUME /data\n", 2, "VOLUME makes a folder on the host's disk"),
    (HEAD + 'volume ["/a", "/b"]\n', 2, "VOLUME"),
    (HEAD + "VOL\\\nUME /x\n", 2, "VOLUME"),
    (HEAD + 'LABEL "medalboard.runner"=someone-else\n', 2, "labels named medalboard.* (or by a variable)"),
    (HEAD + "LABEL a=1 Medalboard.Site=x\n", 2, "medalboard.site"),
    (HEAD + "ARG K=medalboard.sandbox\nLABEL ${K}=1\n", 3, "by a variable"),
    ("# syntax=docker/dockerfile:1\n" + HEAD, 1, "a syntax directive names a frontend image"),
    ("  #  Syntax = example.com/frontend\n" + HEAD, 1, "a syntax directive"),
    ("# escape=`\n# escape=\\\n" + HEAD, 2, "the escape directive is given twice"),
    ("# escape=x\n" + HEAD, 1, "the escape character must be"),
])
def test_each_way_out_is_refused_naming_its_line(text, line, why):
    problems = refused(text)
    assert any(p.startswith(f"line {line}: ") and why in p for p in problems), problems


def test_every_refused_line_is_named_once_and_in_order():
    text = HEAD + "VOLUME /a\nRUN ok\nADD http://e/x /x\nONBUILD RUN x\n"
    assert [p.split(":", 1)[0] for p in refused(text)] == ["line 2", "line 4", "line 5"]


def test_check_file_names_the_file_and_refuses_what_it_cannot_read(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text(HEAD + "ADD http://e/x /x\n")
    with pytest.raises(DockerfileRefused, match=r"(?s)agent 'x': .*refused.*line 2: ADD http://e/x /x"):
        check_file(path, where="agent 'x'", allowed_bases=BASES)
    path.write_bytes(b"FROM mlebench-env\nRUN \xff\n")
    with pytest.raises(DockerfileRefused, match="not UTF-8"):
        check_file(path, allowed_bases=BASES)
    path.write_text(HEAD + "COPY . /x\n")
    assert check_file(path, allowed_bases=BASES) == HEAD + "COPY . /x\n"


def test_the_default_bases_are_mlebench_env_and_the_sites_agent_image(settings):
    settings.MEDALBOARD_AGENT_IMAGE = "site-agent:v7"
    assert check("FROM site-agent:v7\nFROM mlebench-env\n") == []
    assert check("FROM medalboard-agent:bookworm\n")  # no longer the site's image


def test_the_bases_a_build_needs_here_are_named():
    text = "FROM mlebench-env AS a\nFROM medalboard-agent:bookworm\nCOPY --from=a /x /y\nFROM scratch\n"
    assert external_images(text) == {"mlebench-env", "medalboard-agent:bookworm"}


def test_reading_an_agents_folder_refuses_its_dockerfile_before_anything_is_stored(db, tmp_path):
    from runner.agents.importer import import_agents
    from runner.agents.mlebench import AgentFormatError
    from runner.models import AgentDefinition
    from tests.mlebench_agent_support import DOCKERFILE, make_agents_dir

    agents = make_agents_dir(tmp_path, Dockerfile=DOCKERFILE + "VOLUME /home/agent/cache\n")
    with pytest.raises(AgentFormatError, match=r"(?s)probe/Dockerfile.*line \d+: VOLUME /home/agent/cache"):
        import_agents(agents, build=True, log=lambda *a: None)
    assert not AgentDefinition.objects.filter(name__startswith="probe").exists()


def test_building_an_agent_checks_the_dockerfile_it_sends(db, tmp_path):
    """build_image (what a runner's build_agent_images calls) checks again, before any daemon call."""
    from runner.agents.images import AgentBuildError, build_image
    from runner.agents.mlebench import Limits, read_agents
    from tests.mlebench_agent_support import make_agents_dir

    agents = make_agents_dir(tmp_path)
    [variant, _] = sorted(read_agents(agents, Limits()), key=lambda v: v.id)
    (agents / "probe" / "Dockerfile").write_text(HEAD + "ADD http://127.0.0.1:9/x /x\n")  # changed after reading
    with pytest.raises(AgentBuildError, match=r"(?s)probe: .*line 2: ADD http://127.0.0.1:9/x"):
        build_image(variant, client=object(), log=lambda *a: None)


def test_a_base_that_is_not_on_this_host_stops_the_build_before_the_daemon_could_pull_it(db, tmp_path):
    from runner.agents.images import AgentBuildError, build_image
    from runner.agents.mlebench import Limits, read_agents
    from tests.mlebench_agent_support import make_agents_dir
    from tests.runner.test_sandbox_docker import FakeClient

    agents = make_agents_dir(tmp_path, Dockerfile="FROM medalboard-agent:bookworm\nCOPY . /home/agent\n")
    variant = next(v for v in read_agents(agents, Limits()) if v.id == "probe")
    client = FakeClient(images=("mlebench-env",))  # no medalboard-agent:bookworm here
    with pytest.raises(AgentBuildError, match="builds on medalboard-agent:bookworm, which is not built on this "
                                              "Docker host"):
        build_image(variant, client=client, log=lambda *a: None)


def test_the_shipped_agents_dockerfiles_pass(settings):
    from pathlib import Path

    dockerfiles = sorted((Path(settings.BASE_DIR) / "agents").glob("*/Dockerfile"))
    assert len(dockerfiles) >= 2
    for path in dockerfiles:
        assert check(path.read_text()) == [], path
