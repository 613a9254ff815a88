"""The gateway's design on a real Docker engine: a container with network `none`, the gateway's Unix
socket bind-mounted at /run/medalboard/gateway.sock and the forwarder wrapping the agent's command,
calls its LLM on 127.0.0.1 as a non-root user; the real key stays outside and nothing else is reachable."""

from __future__ import annotations

import json

import docker
import pytest
from django.conf import settings
from docker.types import Mount

from runner.backends.docker import AGENT_UID
from runner.gateway import SANDBOX_PORT, SANDBOX_SOCKET, environment
from tests.conftest import REQUIRE_SERVICES
from tests.gateway_support import REAL_KEYS, serve_upstream, start_gateway
from tests.llm_upstream import OPENAI_USAGE

pytestmark = pytest.mark.docker
upstream = pytest.fixture(scope="module")(serve_upstream)
TOOLS = settings.BASE_DIR / "runner" / "agent_tools"
AGENT = """
import json, os, sys, urllib.error, urllib.request
def call(url, key):
    req = urllib.request.Request(url, data=json.dumps({"model": "gpt-4o", "messages": []}).encode(),
                                 headers={"authorization": "Bearer " + key, "content-type": "application/json"})
    try:
        return json.load(urllib.request.urlopen(req, timeout=20))
    except urllib.error.HTTPError as exc:
        return {"status": exc.code}
    except OSError as exc:
        return {"unreachable": str(exc)}
base = os.environ["OPENAI_BASE_URL"]
print(json.dumps({"ok": call(base + "/chat/completions", os.environ["OPENAI_API_KEY"]),
                  "wrong_key": call(base + "/chat/completions", "sk-guess"),
                  "internet": call("http://1.1.1.1/", "x"),
                  "env_has_real_key": any(k in v for v in os.environ.values() for k in sys.argv[1:])}))
"""


@pytest.fixture
def client():
    engine = docker.from_env()
    try:
        engine.images.get(settings.MEDALBOARD_AGENT_IMAGE)
    except docker.errors.ImageNotFound:
        message = f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built (python manage.py build_agent_image)"
        pytest.fail(message) if REQUIRE_SERVICES else pytest.skip(message)
    return engine


def test_an_agent_in_a_networkless_container_reaches_its_llm_through_the_gateway(client, upstream, tmp_path):
    upstream.reset()
    runner_dir = tmp_path / "task-1-a1.runner"
    gw = start_gateway(upstream.url, runner_dir, unix_path=runner_dir / "gateway.sock")
    try:
        output = client.containers.run(
            settings.MEDALBOARD_AGENT_IMAGE,
            ["python3", "/opt/medalboard/gateway_forwarder.py", "--port", str(SANDBOX_PORT), "--socket",
             SANDBOX_SOCKET, "--", "python3", "-c", AGENT, *REAL_KEYS],
            environment={**gw.sandbox_env, **environment(SANDBOX_PORT)}, network_mode="none", read_only=True,
            user=f"{AGENT_UID}:{AGENT_UID}", cap_drop=["ALL"], security_opt=["no-new-privileges"], remove=True,
            mounts=[Mount("/opt/medalboard", str(TOOLS), type="bind", read_only=True),
                    Mount(SANDBOX_SOCKET, str(gw.gateway.unix_path), type="bind")],
            stdout=True, stderr=False,
        )
    finally:
        gw.gateway.stop()
    seen = json.loads(output.decode().strip().splitlines()[-1])
    assert seen["ok"]["usage"]["completion_tokens"] == OPENAI_USAGE[1]
    assert seen["wrong_key"] == {"status": 401}
    assert "unreachable" in seen["internet"]  # network none: only the gateway
    assert seen["env_has_real_key"] is False
    assert upstream.requests[0]["headers"]["authorization"] == f"Bearer {REAL_KEYS[0]}"
    assert [s["kind"] for s in gw.steps] == ["llm", "error"]  # the call, and the refused guess
