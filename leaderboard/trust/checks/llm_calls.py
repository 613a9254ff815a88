"""LLM calls made outside the gateway. On a runner every call an agent makes goes through the
metered gateway (Run.usage_metered; each call is an `llm` step it wrote), so a call that went
straight to a provider is unmetered and unrecorded. MLE-bench also forbids the solution itself from
calling an LLM API to write code or make predictions. Signals: an LLM API's address in what the
agent ran; solution code that calls an LLM SDK; and, on a job run, the agent's own `llm` steps
compared with the gateway's record: more calls claimed than the gateway counted, or a claimed call
carrying a prompt digest the gateway never saw (a step forged in the gateway's shape). Only the
runner's path marks a step as the gateway's (leaderboard.trajectories.provenance); whatever the agent
wrote is its claim."""

from __future__ import annotations

import re

from leaderboard.trajectories.provenance import recorded_by_gateway
from leaderboard.trust.checks.base import Check, Hit, agent_text, code_lines, first_steps, register

LLM_HOSTS = re.compile(
    r"\b(?:api\.openai\.com|[\w-]+\.openai\.azure\.com|api\.anthropic\.com|generativelanguage\.googleapis\.com"
    r"|aiplatform\.googleapis\.com|openrouter\.ai|api\.groq\.com|api\.deepseek\.com|api\.mistral\.ai|api\.x\.ai"
    r"|api\.together\.xyz|api\.cohere\.(?:ai|com)|api-inference\.huggingface\.co|bedrock-runtime\.[\w.-]+)\b")
SDK_CALL = re.compile(
    r"\b(?:chat\.completions\.create|completions\.create|responses\.create|messages\.create|generate_content"
    r"|litellm\.completion|ChatCompletion\.create)\s*\(")
SDK_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:openai|anthropic|google\.generativeai|google\.genai|litellm|groq"
                        r"|mistralai|cohere)\b", re.MULTILINE)


DIGESTS_KEPT = 10_000  # prompt digests remembered per side; past that the counts still compare


def is_gateway_step(step) -> bool:
    """A step the gateway recorded (docs/gateway.md), marked so by the runner, not one the agent reports."""
    return recorded_by_gateway(step.data)


def _digest(step) -> str | None:
    value = step.data.get("messages_sha256") if isinstance(step.data, dict) else None
    return value if isinstance(value, str) else None


@register
class LlmOutsideGateway(Check):
    name = "llm-outside-gateway"
    title = "LLM calls outside the gateway"
    rule = "Every LLM call goes through the metered gateway, and the solution itself calls no LLM API."

    def begin(self, context) -> None:
        super().begin(context)
        self.direct: list[int] = []
        self.solution_calls: list[int] = []
        self.quotes: list[str] = []
        self.gateway_calls = 0
        self.reported_calls = 0
        self.gateway_digests: set[str] = set()
        self.claimed: list[tuple[int, str]] = []  # (step, digest) of the agent's claims that name one

    def see(self, step) -> None:
        if step.kind == "llm":
            self._see_call(step)
            return
        text = agent_text(step)
        lines = code_lines(text)
        direct = next((line for line in lines if LLM_HOSTS.search(line)), None)
        if direct is not None:
            self.direct.append(step.index)
            self._quote(direct)
        elif step.kind == "code" and SDK_IMPORT.search(text):
            call = next((line for line in lines if SDK_CALL.search(line)), None)
            if call is not None:
                self.solution_calls.append(step.index)
                self._quote(call)

    def _see_call(self, step) -> None:
        digest = _digest(step)
        if is_gateway_step(step):
            self.gateway_calls += 1
            if digest and len(self.gateway_digests) < DIGESTS_KEPT:
                self.gateway_digests.add(digest)
            return
        self.reported_calls += 1
        if digest and len(self.claimed) < DIGESTS_KEPT:
            self.claimed.append((step.index, digest))

    def _unrecorded(self) -> list[int]:
        """The agent's claimed calls whose prompt digest the gateway never recorded (when it kept them all)."""
        if len(self.gateway_digests) >= DIGESTS_KEPT:
            return []
        return [index for index, digest in self.claimed if digest not in self.gateway_digests]

    def _quote(self, line: str) -> None:
        if len(self.quotes) < 3:
            self.quotes.append(self.context.quote(line))

    def end(self) -> Hit | None:
        run = self.context.run
        unmetered = (run.origin == "job" and self.reported_calls > self.gateway_calls)
        unrecorded = self._unrecorded() if run.origin == "job" else []
        if not (self.direct or self.solution_calls or unmetered or unrecorded):
            return None
        parts = []
        if self.direct:
            parts.append(f"{len(set(self.direct))} step(s) address an LLM API directly")
        if self.solution_calls:
            parts.append(f"the solution code calls an LLM in {len(set(self.solution_calls))} step(s)")
        if unmetered:
            parts.append(f"the agent reports {self.reported_calls} LLM call(s), the gateway metered "
                         f"{self.gateway_calls}")
        if unrecorded:
            parts.append(f"{len(unrecorded)} LLM step(s) the agent wrote name a prompt the gateway never saw")
        summary = "; ".join(parts) + (" (usage metered by the gateway)." if run.usage_metered else ".")
        severity = "violation" if self.direct or unmetered or unrecorded else "warning"
        steps = first_steps(self.direct + self.solution_calls + unrecorded)
        return Hit(severity, summary[0].upper() + summary[1:], steps,
                   {"quotes": self.quotes, "gateway_calls": self.gateway_calls, "reported_calls": self.reported_calls,
                    "unrecorded_claims": len(unrecorded), "usage_metered": bool(run.usage_metered)})
