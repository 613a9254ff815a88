"""Specs for the tabular, text and sequence competitions that had no grader: each read from MLE-bench's
grade.py and prepare.py for the competition (source="mle-bench grade.py"), quirks in the notes."""

from __future__ import annotations

from .spec_common import LABEL_NOTE, _mle
from .spec_types import GraderSpec, Values

STRUCTURED: tuple[GraderSpec, ...] = (
    _mle("herbarium-2020-fgvc7", "f1-macro", "Id", ("Predicted",), Values.INTEGER,
         notes=("Macro-averaged F1 over the category ids that occur in the answers or the predictions, as "
                "MLE-bench computes it with scikit-learn.",)),
    _mle("tensorflow-speech-recognition-challenge", "accuracy", "fname", ("label",), Values.LABEL,
         notes=("Accuracy of the label per clip, as MLE-bench computes it.", LABEL_NOTE)),
    _mle("rsna-breast-cancer-detection", "probabilistic-f1", "prediction_id", ("cancer",), Values.NUMBER,
         notes=("Probabilistic F1 (beta = 1) as MLE-bench computes it with the host's pfbeta: predictions are "
                "clipped to [0, 1], so any finite number is accepted. MLE-bench scores a file with an empty "
                "prediction as 0; this grader rejects it, naming the rows.",)),
    _mle("rsna-2022-cervical-spine-fracture-detection", "cervical-weighted-log-loss", "row_id", ("fractured",),
         Values.PROBABILITY, context_columns=("row_id",),
         notes=("The host's weighted multi-label log loss, as MLE-bench computes it: rows '<study>_<label>' are "
                "regrouped per study; each of the 8 labels' binary log loss (probabilities clipped to "
                "[1e-15, 1 - 1e-15]) is weighted 7 (patient_overall) or 1 (a vertebra) for a negative and twice "
                "that for a positive; the weighted mean per study is averaged over studies. Like MLE-bench, "
                "predictions must be in [0, 1] and none may be missing.",)),
    _mle("bms-molecular-translation", "levenshtein", "image_id", ("InChI",), Values.TEXT, na_text_as_nan=True,
         notes=("The mean Levenshtein distance between predicted and true InChI strings, as MLE-bench computes "
                "it. Like MLE-bench, which reads the file with pandas and then calls str(), a cell pandas reads "
                "as missing (empty, 'NA', 'null', ...) is scored as the string 'nan'.",)),
    _mle("AI4Code", "kendall-tau-orders", "id", ("cell_order",), Values.TEXT, na_text_as_nan=True,
         notes=("Kaggle's Kendall tau over cell orders, as MLE-bench computes it: the inversions of every notebook "
                "are summed before dividing by the summed number of pairs, so long notebooks weigh more. Each "
                "cell_order must list exactly the notebook's cells (space-separated), or the file is invalid, as "
                "it is for MLE-bench. MLE-bench passes the submission's order as the ground truth and the "
                "answers' as the prediction; the count of inversions is the same either way.",)),
    _mle("osic-pulmonary-fibrosis-progression", "osic-laplace-log-likelihood", "Patient_Week", ("FVC",),
         Values.NUMBER, submission_targets=("FVC", "Confidence"), context_columns=("Patient", "Patient_Week"),
         notes=("The modified Laplace log likelihood (confidence floored at 70, error capped at 1000), as MLE-bench "
                "computes it: only the answers' measured weeks are scored, and of those each patient's last three.",
                "MLE-bench rejects a Patient_Week that is not in the answers but scores a file that leaves rows "
                "out (on the rows it has); this grader requires every Patient_Week of the sample submission. "
                "MLE-bench reads an empty Confidence as 0 (so 70); this grader rejects empty values.")),
    _mle("tensorflow2-question-answering", "qa-micro-f1", "example_id", ("answers",), Values.TEXT,
         submission_targets=("PredictionString",), na_text_as_empty=True, answers_layout="natural-questions-jsonl",
         notes=("Micro F1 of answer predictions, as MLE-bench computes it: each '<example_id>_long' and '_short' "
                "row is one binary decision; a prediction ('start:end', YES or NO) is right when it is one of the "
                "annotated answers, an empty prediction is right when there is none. With one decision per row "
                "micro F1 equals the fraction of rows right. Any other prediction makes the file invalid.",)),
)
