"""LLM calls made outside the gateway. On a runner every call an agent makes goes through the
metered gateway (Run.usage_metered; each call is an `llm` step it wrote), so a call that went
straight to a provider is unmetered and unrecorded. MLE-bench also forbids the solution itself from
calling an LLM API to write code or make predictions. Signals: an LLM API's address in what the
agent ran; solution code that calls an LLM SDK; and, on a job run, more LLM calls reported by the
agent than the gateway counted."""

from __future__ import annotations

import re

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


def is_gateway_step(step) -> bool:
    """An `llm` or `error` step the gateway recorded (docs/gateway.md), not one the agent reports."""
    data = step.data if isinstance(step.data, dict) else {}
    if step.kind == "error":
        return str(data.get("type", "")).startswith("medalboard_")
    return "provider" in data and ("messages_sha256" in data or "totals" in data)


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

    def see(self, step) -> None:
        if step.kind == "llm":
            if is_gateway_step(step):
                self.gateway_calls += 1
            else:
                self.reported_calls += 1
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

    def _quote(self, line: str) -> None:
        if len(self.quotes) < 3:
            self.quotes.append(self.context.quote(line))

    def end(self) -> Hit | None:
        run = self.context.run
        unmetered = (run.origin == "job" and self.reported_calls > self.gateway_calls)
        if not (self.direct or self.solution_calls or unmetered):
            return None
        parts = []
        if self.direct:
            parts.append(f"{len(set(self.direct))} step(s) address an LLM API directly")
        if self.solution_calls:
            parts.append(f"the solution code calls an LLM in {len(set(self.solution_calls))} step(s)")
        if unmetered:
            parts.append(f"the agent reports {self.reported_calls} LLM call(s), the gateway metered "
                         f"{self.gateway_calls}")
        summary = "; ".join(parts) + (" (usage metered by the gateway)." if run.usage_metered else ".")
        severity = "violation" if self.direct or unmetered else "warning"
        return Hit(severity, summary[0].upper() + summary[1:], first_steps(self.direct + self.solution_calls),
                   {"quotes": self.quotes, "gateway_calls": self.gateway_calls,
                    "reported_calls": self.reported_calls, "usage_metered": bool(run.usage_metered)})
