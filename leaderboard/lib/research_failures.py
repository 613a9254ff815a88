"""MLAgentBench's failure classes of a research run (MLAgentBench/eval.py and plot.py: oom_error,
connection_error, error, json_error, long_prompt_error, mkl_error, quota_error, langchain_error, and
whether the agent submitted a final answer), read from what a run left.

    classes = failure_classes(log_text, final_answer=False)   # ["out_of_memory", "no_final_answer"]
    classes = trace_folder_classes(log=..., main_log=..., error_txt=None, has_overall_time=True)

The same rules for a run of ours (the agent's output, whether it ended by itself with a workspace the
eval could score) and for an imported MLAgentBench trace (its log, agent_log/main_log, env_log/error.txt
and env_log/overall_time.txt, its "Final Answer" action). EXCLUDED are the classes plot.py drops from
its statistics (error, connection, oom, mkl): such a run is shown with its class, counted apart.
"""

from __future__ import annotations

OUT_OF_MEMORY = "out_of_memory"
LLM_CONNECTION = "llm_connection"
NO_FINAL_ANSWER = "no_final_answer"
ERROR = "error"  # MLAgentBench: error.txt present (not langchain's) or no overall_time.txt: the run crashed
JSON_ERRORS = "json_errors"  # more than 2 JSONDecodeError in main_log
LONG_PROMPT = "long_prompt"  # "EnvError: too long input for the tool"
MKL = "mkl"  # MKL / OpenBLAS threading failures
QUOTA = "quota"  # "RemoteServiceError: EXCEPTION: total quota" in error.txt
LANGCHAIN = "langchain"  # langchain's OutputParserException in error.txt (not an "error" in plot.py)
LABELS = {
    ERROR: "Ended in error (left out of the statistics)",
    OUT_OF_MEMORY: "Out of memory (left out of the statistics)",
    LLM_CONNECTION: "LLM connection errors (left out of the statistics)",
    MKL: "MKL/OpenBLAS thread error (left out of the statistics)",
    JSON_ERRORS: "Repeated JSON errors in the agent's replies",
    LONG_PROMPT: "Input too long for a tool",
    QUOTA: "LLM quota exhausted",
    LANGCHAIN: "LangChain output parser error",
    NO_FINAL_ANSWER: "Never submitted a final answer",
}
# plot.py's df_no_error: runs with these are dropped from every statistic (its per-experiment exceptions
# for two GPT-4 and the LangChain experiments are left out: they are exceptions for its own paper's runs).
EXCLUDED = frozenset({ERROR, LLM_CONNECTION, OUT_OF_MEMORY, MKL})
MKL_MARKERS = ("rror: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with "
               "libgomp-a34b3233.so.1 library.", "OpenBLAS blas_thread_init:")
QUOTA_MARKER = "RemoteServiceError: EXCEPTION: total quota"
LANGCHAIN_MARKER = "langchain.schema.OutputParserException"
LONG_PROMPT_MARKER = "EnvError: too long input for the tool"
OOM_MARKER = "CUDA out of memory"  # the one eval.py/plot.py search the logs for
BAD_MAIN_LOG = ("You exceeded your current quota, please check your plan and billing details.",
                "Error: 'text-similarity-ada-001'", "Error: 'text-embedding-ada-001'")
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
    found = {ERROR} if errored else set()
    if killed_for_memory or any(marker in log_text for marker in MEMORY_MARKERS):
        found.add(OUT_OF_MEMORY)
    if any(marker in log_text for marker in CONNECTION_MARKERS):
        found.add(LLM_CONNECTION)
    if any(marker in log_text for marker in MKL_MARKERS):
        found.add(MKL)
    if log_text.count("JSONDecodeError") > 2:
        found.add(JSON_ERRORS)
    if LONG_PROMPT_MARKER in log_text:
        found.add(LONG_PROMPT)
    if not final_answer:
        found.add(NO_FINAL_ANSWER)
    return ordered(found)


def trace_folder_classes(*, log: str, main_log: str, error_txt: str | None, has_overall_time: bool) -> list[str]:
    """An MLAgentBench log folder's classes exactly as eval.py/plot.py decide them: `log` is <run>/log,
    `main_log` <run>/agent_log/main_log, `error_txt` env_log/error.txt (None when absent)."""
    found = set()
    if OOM_MARKER in log or OOM_MARKER in main_log:
        found.add(OUT_OF_MEMORY)
    if "Connection aborted" in log or any(bad in main_log for bad in BAD_MAIN_LOG):
        found.add(LLM_CONNECTION)
    langchain = error_txt is not None and LANGCHAIN_MARKER in error_txt
    if (error_txt is not None and not langchain) or not has_overall_time:
        found.add(ERROR)
    if langchain:
        found.add(LANGCHAIN)
    if main_log.count("JSONDecodeError") > 2:
        found.add(JSON_ERRORS)
    if LONG_PROMPT_MARKER in main_log:
        found.add(LONG_PROMPT)
    if any(m in log for m in MKL_MARKERS) or any(m in main_log for m in MKL_MARKERS):
        found.add(MKL)
    if error_txt is not None and QUOTA_MARKER in error_txt:
        found.add(QUOTA)
    return ordered(found)


def ordered(classes) -> list[str]:
    """Classes in LABELS' order (unknown ones after, sorted)."""
    known = [c for c in LABELS if c in classes]
    return known + sorted(c for c in classes if c not in LABELS)


def excluded(classes) -> bool:
    """Whether plot.py leaves a run with these classes out of its statistics."""
    return any(c in EXCLUDED for c in classes or ())
