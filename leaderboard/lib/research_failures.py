"""MLAgentBench's failure classes of a research run (MLAgentBench/eval.py: oom_error,
connection_error, and whether the agent submitted a final answer), read from what a run left.

    classes = failure_classes(log_text, final_answer=False)   # ["out_of_memory", "no_final_answer"]

The same rules for a run of ours (the agent's output, whether it ended by itself with a workspace the
eval could score) and for an imported MLAgentBench trace (its logs, its "Final Answer" action).
"""

from __future__ import annotations

OUT_OF_MEMORY = "out_of_memory"
LLM_CONNECTION = "llm_connection"
NO_FINAL_ANSWER = "no_final_answer"
ERROR = "error"  # MLAgentBench: error.txt present (the run crashed); left out of the statistics
LABELS = {
    ERROR: "Ended in error (left out of the improvement)",
    OUT_OF_MEMORY: "Out of memory",
    LLM_CONNECTION: "LLM connection errors",
    NO_FINAL_ANSWER: "Never submitted a final answer",
}
# MLAgentBench's own markers, and Python's and PyTorch's wording of the same failures
MEMORY_MARKERS = ("CUDA out of memory", "MemoryError", "torch.OutOfMemoryError", "Cannot allocate memory")
CONNECTION_MARKERS = (
    "Connection aborted", "You exceeded your current quota, please check your plan and billing details.",
    "Error: 'text-similarity-ada-001'", "Error: 'text-embedding-ada-001'", "APIConnectionError",
    "Connection refused", "RateLimitError",
)


def failure_classes(log_text: str, *, final_answer: bool, killed_for_memory: bool = False,
                    errored: bool = False) -> list[str]:
    """The classes that apply, in LABELS' order."""
    found = [ERROR] if errored else []
    if killed_for_memory or any(marker in log_text for marker in MEMORY_MARKERS):
        found.append(OUT_OF_MEMORY)
    if any(marker in log_text for marker in CONNECTION_MARKERS):
        found.append(LLM_CONNECTION)
    if not final_answer:
        found.append(NO_FINAL_ANSWER)
    return found
