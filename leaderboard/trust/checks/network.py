"""Network attempts. A sandbox here has network `none` (unless its runner's operator lent it an egress
network), so an attempt fails, but it still says the agent went looking beyond its data; an upload's
attempts may have worked. Three sources: what the agent ran (commands, code and tool calls that
fetch from a host), what came back (a resolver or connection error), and, for a job run, the
sandbox's own record (the network it had, the agent's output log tail)."""

from __future__ import annotations

import re

from leaderboard.trust.checks.base import Check, Hit, agent_text, code_lines, first_steps, output_text, register

# The sandbox's own services: the submission checker (:5000) and the LLM gateway's forwarder (:8787).
LOOPBACK = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]"}  # noqa: S104 - names, not a bind
URL = re.compile(r"\b(?:https?|ftp|wss?)://([^/\s'\"`:?#)]+)", re.IGNORECASE)
FETCHING_COMMAND = re.compile(
    r"(?:^|[;&|(]\s*|\bsudo\s+)(curl|wget|git\s+(?:clone|fetch|pull)|pip3?\s+install|python3?\s+-m\s+pip\s+install"
    r"|conda\s+install|apt(?:-get)?\s+install|kaggle\s+(?:competitions|datasets|kernels)|huggingface-cli\s+download"
    r"|ssh|scp|nc|telnet|ping)\b")
FETCHING_CODE = re.compile(
    r"\b(?:requests\.(?:get|post|put|head|request)|urllib\.request\.urlopen|urlopen|urlretrieve|httpx\.(?:get|post|Client)"
    r"|socket\.create_connection|torch\.hub\.load|nltk\.download|hf_hub_download|snapshot_download|kaggle\.api\.\w+)\s*\(")
OFFLINE_INSTALL = re.compile(r"--no-index|--offline|\s-e\s+\.|\.whl\b")
# What a resolver or a refused connection prints (Python, curl, wget, pip, git).
NETWORK_ERRORS = re.compile(
    r"Temporary failure in name resolution|Name or service not known|nodename nor servname|getaddrinfo failed"
    r"|Network is unreachable|Could not resolve host|Failed to establish a new connection|NameResolutionError"
    r"|No route to host|unable to resolve host address|Could not fetch URL|Max retries exceeded with url")
# Sites that hold the competition's own data and other people's solutions: MLE-bench forbids both.
SOLUTION_SITES = re.compile(r"(?:^|\.)(?:kaggle\.com|kaggleusercontent\.com|kaggle\.io)$")


@register
class Network(Check):
    name = "network"
    title = "Network attempts"
    rule = "The agent works offline, from the data it was given; MLE-bench forbids fetching others' solutions."

    def begin(self, context) -> None:
        super().begin(context)
        self.attempts: list[int] = []
        self.errors: list[int] = []
        self.hosts: set[str] = set()
        self.quotes: list[str] = []
        self.solution_site = False

    def see(self, step) -> None:
        for line in code_lines(agent_text(step)):
            if self._attempt(line, step.kind):
                self.attempts.append(step.index)
                if len(self.quotes) < 3:
                    self.quotes.append(self.context.quote(line))
                break
        if NETWORK_ERRORS.search(output_text(step)):
            self.errors.append(step.index)

    def _attempt(self, line: str, kind: str) -> bool:
        hosts = {h.lower().rstrip(".") for h in URL.findall(line)} - LOOPBACK
        only_loopback = bool(URL.search(line)) and not hosts  # curl localhost:5000/validate: the checker
        if kind in ("command", "action"):
            command = FETCHING_COMMAND.search(line)
            offline = command is not None and command.group(1).startswith(("pip", "python", "conda")) \
                and bool(OFFLINE_INSTALL.search(line))
            fetching = (command is not None and not offline and not only_loopback) or bool(hosts)
            self.solution_site |= command is not None and command.group(1).startswith("kaggle")
        elif kind == "code":
            fetching = (bool(FETCHING_CODE.search(line)) and not only_loopback) or (bool(hosts) and _reads_url(line))
        else:
            fetching = False
        if fetching:
            self.hosts |= hosts
            self.solution_site |= any(SOLUTION_SITES.search(h) for h in hosts)
        return fetching

    def end(self) -> Hit | None:
        sandbox = self._sandbox_record()
        if not self.attempts and not self.errors and not sandbox.get("output_errors"):
            return None
        where = (f"the sandbox had the egress network {sandbox['network']!r}" if sandbox.get("network")
                 else "the sandbox had no network" if sandbox.get("job") else "an uploaded run")
        parts = [f"{len(set(self.attempts))} step(s) tried to reach the network"] if self.attempts else []
        if self.errors:
            parts.append(f"{len(set(self.errors))} step(s) show network errors")
        if sandbox.get("output_errors"):
            parts.append("the agent's output log shows network errors")
        severity = "violation" if self.solution_site else "warning"
        hosts = sorted(self.hosts)[:10]
        summary = "; ".join(parts) + (f" ({', '.join(hosts)})" if hosts else "") + f"; {where}."
        return Hit(severity, summary[0].upper() + summary[1:], first_steps(self.attempts + self.errors),
                   {"hosts": hosts, "quotes": self.quotes, "sandbox": sandbox,
                    "solution_site": self.solution_site})

    def _sandbox_record(self) -> dict:
        """What the runner recorded: the job's network (None is `none`) and its output log's tail."""
        task = self.context.job_task
        if task is None:
            return {}
        record = {"job": True, "network": task.job.network or None,
                  "backend": ((self.context.run.recipe or {}).get("sandbox") or {}).get("backend", "")}
        if NETWORK_ERRORS.search(task.log_tail or ""):
            record["output_errors"] = True
        return record


def _reads_url(line: str) -> bool:
    """A URL in code that is read as a file (pandas, PIL, open) rather than only named."""
    return bool(re.search(r"\b(?:read_csv|read_json|read_parquet|read_table|load|open|get|fetch|download)\w*\s*\(",
                          line))
