"""Agent Dockerfiles that try to reach outside the build (marker docker), imported through the real
path (import_agents, build=True). The Docker daemon fetches `ADD <url>` itself, with the host's
network, whatever the build network is: a server in this test shows that it does for a plain
`docker build`, and that no spelling of it in an agent's Dockerfile ever reaches the server. A base
image that declares a volume is refused after its stage is built; a well-behaved agent still builds,
and its build's log says what the build may reach. No container runs here (nothing depends on the
OCI runtime); tests/runner/test_hostile_images.py runs a hostile image under runc and runsc."""

from __future__ import annotations

import io
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import docker
import pytest

from runner.agents.importer import import_agents
from runner.agents.mlebench import AgentFormatError
from runner.models import AgentDefinition
from tests.mlebench_agent_support import DOCKERFILE, make_agents_dir

pytestmark = pytest.mark.docker


@pytest.fixture
def server():
    """An HTTP server on the host's loopback that counts what it is asked."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            asked.append(self.path)
            body = b"fetched from the host's network\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_HEAD = do_GET  # noqa: N815

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.asked = asked
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_the_daemon_itself_fetches_add_of_a_url_with_the_network_none(server):
    """Why the Dockerfile is checked: the build network covers RUN steps only."""
    client = docker.from_env()
    tag = f"medalboard-test-add-url:{uuid.uuid4().hex[:8]}"
    dockerfile = f"FROM scratch\nADD http://127.0.0.1:{server.server_port}/payload /payload\n"
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, network_mode="none", rm=True, pull=False)
    client.images.remove(tag, force=True)
    assert server.asked == ["/payload"]


@pytest.mark.parametrize("spelling, offset", [  # offset: the refused line, from the first one added
    ("ADD http://127.0.0.1:{port}/payload /home/agent/payload", 0),
    ("add --chmod=755 \\\n  # hidden below a comment\n  HTTP://127.0.0.1:{port}/payload /home/agent/payload", 0),
    ('ADD ["http://127.0.0.1:{port}/payload", "/home/agent/payload"]', 0),
    ("RUN cat <<EOF\nADD http://127.0.0.1:{port}/payload /home/agent/payload\nEOF", 1),
    ("ONBUILD ADD http://127.0.0.1:{port}/payload /home/agent/payload", 0),
    ("ARG URL=http://127.0.0.1:{port}/payload\nADD ${{URL}} /home/agent/payload", 1),
])
def test_add_of_a_url_is_refused_naming_its_line_and_the_server_is_never_asked(db, mlebench_env, server, tmp_path,
                                                                              spelling, offset):
    hostile = DOCKERFILE + spelling.format(port=server.server_port) + "\n"
    line = len(DOCKERFILE.splitlines()) + 1 + offset
    agents = make_agents_dir(tmp_path, Dockerfile=hostile)
    with pytest.raises(AgentFormatError, match=rf"(?s)probe/Dockerfile: refused.*line {line}: "):
        import_agents(agents, build=True, log=lambda *a: None)
    assert server.asked == []
    assert not AgentDefinition.objects.filter(name__startswith="probe").exists()


def test_a_base_that_declares_a_volume_is_refused_after_its_stage(db, mlebench_env, tmp_path, settings):
    from runner.agents.images import AgentBuildError, build_image
    from runner.agents.mlebench import Limits, read_agents

    client = docker.from_env()
    base = f"medalboard-test-volume-base:{uuid.uuid4().hex[:8]}"
    client.images.build(fileobj=io.BytesIO(f"FROM {mlebench_env}\nVOLUME /var/cache/x\n".encode()), tag=base,
                        network_mode="none", rm=True, pull=False)
    settings.MEDALBOARD_AGENT_IMAGE = base  # as if the site's own image declared one
    try:
        agents = make_agents_dir(tmp_path, Dockerfile=f"FROM {base}\nCOPY . /home/agent\n")
        variant = next(v for v in read_agents(agents, Limits()) if v.id == "probe")
        with pytest.raises(AgentBuildError, match=r"probe: its image declares volumes \['/var/cache/x'\]; refused"):
            build_image(variant, client=client, log=lambda *a: None)
        assert not [i for i in client.images.list() if f"{variant.image}-stage" in i.tags]
    finally:
        client.images.remove(base, force=True)


def test_a_well_behaved_agent_builds_and_its_log_says_what_the_build_may_reach(db, mlebench_env, tmp_path):
    said: list[str] = []
    agents = make_agents_dir(tmp_path, probe_py=f"print('built {uuid.uuid4().hex}')\n")  # a new tag: a real build
    report = import_agents(agents, build=True, log=said.append)
    [image] = report.images
    try:
        assert image["built"] and sorted(report.created) == ["probe", "probe/omega"]
        assert any("RUN steps use the network 'none' (MEDALBOARD_AGENTS_BUILD_NETWORK) and nothing else reaches out"
                   in line for line in said), said
        config = docker.from_env().images.get(image["image"]).attrs["Config"]
        assert not config.get("Volumes") and not config.get("OnBuild")
    finally:
        docker.from_env().images.remove(image["image"], force=True)
