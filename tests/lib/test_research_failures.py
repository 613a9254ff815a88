"""MLAgentBench's failure classes, on texts of each kind (MLAgentBench/eval.py's own markers)."""

from leaderboard.lib.research_failures import failure_classes


def test_each_class_from_its_marker():
    assert failure_classes("step 3\nRuntimeError: CUDA out of memory. Tried to allocate", final_answer=True) == [
        "out_of_memory"]
    assert failure_classes("('Connection aborted.', RemoteDisconnected(...))", final_answer=True) == [
        "llm_connection"]
    assert failure_classes("all went well", final_answer=False) == ["no_final_answer"]
    assert failure_classes("all went well", final_answer=True) == []
    assert failure_classes("", final_answer=True, killed_for_memory=True) == ["out_of_memory"]
    assert failure_classes("MemoryError\nYou exceeded your current quota, please check your plan and billing "
                           "details.", final_answer=False) == ["out_of_memory", "llm_connection", "no_final_answer"]
