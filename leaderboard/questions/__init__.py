"""Saved questions: a search or a failure-signature filter saved under a name, counted per experiment
on the experiment comparison (matching.py), kept through a page and `/api/questions/`; and the
optional LLM summary of a selection of runs (summaries/), through the site's configured model.

    question = SavedQuestion.objects.create(owner=u, name="runs with a CUDA OOM", kind="failure",
                                            signature="out of memory")
    matching.matching_runs(question, Run.objects.visible_to(viewer))   # {run id: step to link}
"""
