"""How each competition is graded: one GraderSpec per competition id.

The 22 Lite specs follow ../shared/data/mle-bench/lite-grading.md, i.e. MLE-bench's grade.py, quirks
included; where MLE-bench differs from a careful grader the spec's notes say so and every report for
that competition carries them. All the others were read from (or, for OTHERS, checked against)
MLE-bench's own grade.py and prepare.py for each competition (source="mle-bench grade.py"). A competition
without a spec here is not one of MLE-bench's; if its config names a metric the registry computes it gets
a generic spec (generic.py). Any other is not graded here: no number beats a wrong number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import generic
from .spec_common import LABEL_NOTE, _mle
from .spec_types import Align, GraderSpec, Values
from .specs_structured import STRUCTURED
from .specs_vision import VISION

if TYPE_CHECKING:
    from leaderboard.models import Competition


def _auc(cid: str, id_column: str, target: str, **kw) -> GraderSpec:
    return GraderSpec(cid, "roc-auc", id_column, (target,), Values.PROBABILITY, **kw)


JIGSAW_CLASSES = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")
RANZCR_CLASSES = (
    "ETT - Abnormal", "ETT - Borderline", "ETT - Normal",
    "NGT - Abnormal", "NGT - Borderline", "NGT - Incompletely Imaged", "NGT - Normal",
    "CVC - Abnormal", "CVC - Borderline",
)

NA_TEXT_NOTE = (
    "Like MLE-bench, cells that pandas reads as missing ('', 'NA', 'null', 'nan', ...) are compared as the text "
    "'nan', so e.g. 'NA' matches 'null'; a plain string comparison would tell them apart."
)

LITE: tuple[GraderSpec, ...] = (
    _auc("aerial-cactus-identification", "id", "has_cactus"),
    GraderSpec("aptos2019-blindness-detection", "quadratic-weighted-kappa", "id_code", ("diagnosis",), Values.INTEGER),
    GraderSpec("denoising-dirty-documents", "rmse", "id", ("value",), Values.NUMBER),
    _auc(
        "detecting-insults-in-social-commentary", "Comment", "Insult", unique_ids=False,
        notes=("Rows are matched on the comment text (MLE-bench sorts both files by Comment); identical "
               "comments are paired in file order.",),
    ),
    GraderSpec(
        "dog-breed-identification", "multi-class-log-loss", "id", None, Values.PROBABILITY,
        exact_columns=True, rows_sum_to_one=True, expected_targets=120,
    ),
    GraderSpec("dogs-vs-cats-redux-kernels-edition", "log-loss", "id", ("label",), Values.PROBABILITY),
    _auc("histopathologic-cancer-detection", "id", "label"),
    GraderSpec(
        "jigsaw-toxic-comment-classification-challenge", "mean-column-wise-roc-auc", "id", JIGSAW_CLASSES,
        Values.PROBABILITY, positional_columns=True, unscored_answer_value=-1,
        notes=("MLE-bench scores the submission's class columns by position (toxic, severe_toxic, obscene, "
               "threat, insult, identity_hate), not by name; so does this grader, to agree with it.",),
    ),
    GraderSpec(
        "leaf-classification", "multi-class-log-loss", "id", None, Values.PROBABILITY,
        exact_columns=True, rows_sum_to_one=True, expected_targets=99,
    ),
    _auc("mlsp-2013-birds", "Id", "Probability"),
    GraderSpec(
        "new-york-city-taxi-fare-prediction", "rmse", "key", ("fare_amount",), Values.NUMBER,
        alignment=Align.SORT_UNCHECKED,
        notes=("MLE-bench does not check keys here: it sorts both files by key and compares by position.",),
    ),
    GraderSpec(
        "nomad2018-predict-transparent-conductors", "mean-column-wise-rmsle", "id",
        ("formation_energy_ev_natom", "bandgap_energy_ev"), Values.NON_NEGATIVE, alignment=Align.POSITIONAL,
        notes=("MLE-bench compares rows by position, not by id.",),
    ),
    GraderSpec(
        "plant-pathology-2020-fgvc7", "mean-column-wise-roc-auc", "image_id",
        ("healthy", "multiple_diseases", "rust", "scab"), Values.PROBABILITY, exact_columns=True,
    ),
    _auc("random-acts-of-pizza", "request_id", "requester_received_pizza"),
    GraderSpec(
        "ranzcr-clip-catheter-line-classification", "mean-column-wise-roc-auc", "StudyInstanceUID",
        RANZCR_CLASSES, Values.PROBABILITY,
    ),
    _auc(
        "siim-isic-melanoma-classification", "image_name", "target", source="config+kaggle-format",
        notes=("lite-grading.md does not describe this competition: ROC AUC of target by image_name is taken "
               "from the config (auc-roc) and Kaggle's submission format.",),
    ),
    GraderSpec(
        "spooky-author-identification", "multi-class-log-loss", "id", ("EAP", "HPL", "MWS"), Values.PROBABILITY,
        exact_columns=True, rows_sum_to_one=True,
    ),
    GraderSpec("tabular-playground-series-dec-2021", "accuracy", "Id", ("Cover_Type",), Values.INTEGER),
    _auc("tabular-playground-series-may-2022", "id", "target"),
    GraderSpec("text-normalization-challenge-english-language", "accuracy", "id", ("after",), Values.TEXT,
               na_text_as_nan=True, notes=(NA_TEXT_NOTE,)),
    GraderSpec("text-normalization-challenge-russian-language", "accuracy", "id", ("after",), Values.TEXT,
               na_text_as_nan=True, notes=(NA_TEXT_NOTE,)),
    _auc("the-icml-2013-whale-challenge-right-whale-redux", "clip", "probability"),
)


MAP_SPLIT_NOTE = (
    "Like MLE-bench, predictions are split on single spaces and only the first k tokens count: a repeated guess "
    "or the empty token of a double space uses up a rank without scoring. MLE-bench reads the column with "
    "pandas' type guessing (a column of single ids with one empty cell becomes floats such as '123.0', which "
    "then match nothing); this grader reads it as text, and the report then gives the number MLE-bench would print."
)


def _checked(cid: str, metric: str, id_column: str, target: str, values: Values, *notes: str, **kw) -> GraderSpec:
    """A single-target spec first written from Kaggle's format, since checked against MLE-bench's grade.py."""
    return GraderSpec(cid, metric, id_column, (target,), values, source="mle-bench grade.py", notes=notes, **kw)


UNDEFINED_JACCARD_NOTE = (
    "A row whose answer and prediction are both empty has no words: MLE-bench's jaccard divides by zero and calls "
    "the whole submission invalid; this grader scores the row 1 (the two agree), as Kaggle's notebook intended."
)

OTHERS: tuple[GraderSpec, ...] = (
    _checked("spaceship-titanic", "accuracy", "PassengerId", "Transported", Values.LABEL, LABEL_NOTE),
    _checked("ventilator-pressure-prediction", "mae", "id", "pressure", Values.NUMBER,
             "The config's grader.name says dice-hausdorff-combo, but the metric is MAE of pressure.",
             "Like MLE-bench (and Kaggle: the expiratory phase is not scored), only the answers' rows with u_out "
             "== 0 are scored; every id must still be present.",
             scored_rows_column="u_out", scored_rows_value=0),
    _checked("petfinder-pawpularity-score", "rmse", "Id", "Pawpularity", Values.NUMBER,
             "Like MLE-bench, every Pawpularity must lie in [1, 100]; a submission with one outside is invalid.",
             value_range=(1, 100)),
    _checked("us-patent-phrase-to-phrase-matching", "pearson", "id", "score", Values.NUMBER,
             "A constant score column makes Pearson's r undefined: MLE-bench prints nan and calls the submission "
             "valid; this grader reports the metric as undefined."),
    _checked("statoil-iceberg-classifier-challenge", "log-loss", "id", "is_iceberg", Values.PROBABILITY),
    _checked("invasive-species-monitoring", "roc-auc", "name", "invasive", Values.PROBABILITY),
    _checked("predict-volcanic-eruptions-ingv-oe", "mle-bench-rounded-mae", "segment_id", "time_to_eruption",
             Values.NUMBER,
             "Like MLE-bench, the score is the MAE rounded to a whole number (Python's round: halves to even).",
             "MLE-bench merges the submission into the answers on segment_id, so a repeated segment_id is scored "
             "twice; this grader rejects it, and the report gives the number MLE-bench would print."),
    _checked("learning-agency-lab-automated-essay-scoring-2", "quadratic-weighted-kappa", "essay_id", "score",
             Values.INTEGER,
             "Scores must be whole numbers; MLE-bench would treat a fractional score such as 3.5 as a class of "
             "its own, this grader rejects it."),
    _checked("seti-breakthrough-listen", "roc-auc", "id", "target", Values.PROBABILITY),
    _checked("rsna-miccai-brain-tumor-radiogenomic-classification", "roc-auc", "BraTS21ID", "MGMT_value",
             Values.PROBABILITY,
             "BraTS21IDs are numbers to pandas, as MLE-bench reads them: 00012 and 12 are the same id."),
    _checked("movie-review-sentiment-analysis-kernels-only", "accuracy", "PhraseId", "Sentiment", Values.INTEGER),
    _checked("paddy-disease-classification", "accuracy", "image_id", "label", Values.LABEL, LABEL_NOTE),
    _checked("whale-categorization-playground", "mle-bench-map@5", "Image", "Id", Values.TEXT, MAP_SPLIT_NOTE,
             "Like MLE-bench, the submission must have exactly the columns Image and Id.", exact_columns=True),
    _checked("tweet-sentiment-extraction", "jaccard", "textID", "selected_text", Values.TEXT,
             UNDEFINED_JACCARD_NOTE, na_text_as_empty=True),
)

GOOGLE_QUEST_CLASSES = (
    "question_asker_intent_understanding", "question_body_critical", "question_conversational",
    "question_expect_short_answer", "question_fact_seeking", "question_has_commonly_accepted_answer",
    "question_interestingness_others", "question_interestingness_self", "question_multi_intent",
    "question_not_really_a_question", "question_opinion_seeking", "question_type_choice", "question_type_compare",
    "question_type_consequence", "question_type_definition", "question_type_entity", "question_type_instructions",
    "question_type_procedure", "question_type_reason_explanation", "question_type_spelling", "question_well_written",
    "answer_helpful", "answer_level_of_information", "answer_plausible", "answer_relevance", "answer_satisfaction",
    "answer_type_instructions", "answer_type_procedure", "answer_type_reason_explanation", "answer_well_written",
)
LMSYS_CLASSES = ("winner_model_a", "winner_model_b", "winner_tie")
FREESOUND_CLASSES = (
    "Accelerating_and_revving_and_vroom", "Accordion", "Acoustic_guitar", "Applause", "Bark", "Bass_drum",
    "Bass_guitar", "Bathtub_(filling_or_washing)", "Bicycle_bell", "Burping_and_eructation", "Bus", "Buzz",
    "Car_passing_by", "Cheering", "Chewing_and_mastication", "Child_speech_and_kid_speaking", "Chink_and_clink",
    "Chirp_and_tweet", "Church_bell", "Clapping", "Computer_keyboard", "Crackle", "Cricket", "Crowd",
    "Cupboard_open_or_close", "Cutlery_and_silverware", "Dishes_and_pots_and_pans", "Drawer_open_or_close", "Drip",
    "Electric_guitar", "Fart", "Female_singing", "Female_speech_and_woman_speaking", "Fill_(with_liquid)",
    "Finger_snapping", "Frying_(food)", "Gasp", "Glockenspiel", "Gong", "Gurgling", "Harmonica", "Hi-hat", "Hiss",
    "Keys_jangling", "Knock", "Male_singing", "Male_speech_and_man_speaking", "Marimba_and_xylophone",
    "Mechanical_fan", "Meow", "Microwave_oven", "Motorcycle", "Printer", "Purr", "Race_car_and_auto_racing",
    "Raindrop", "Run", "Scissors", "Screaming", "Shatter", "Sigh", "Sink_(filling_or_washing)", "Skateboard", "Slam",
    "Sneeze", "Squeak", "Stream", "Strum", "Tap", "Tick-tock", "Toilet_flush", "Traffic_noise_and_roadway_noise",
    "Trickle_and_dribble", "Walk_and_footsteps", "Water_tap_and_faucet", "Waves_and_surf", "Whispering", "Writing",
    "Yell", "Zipper_(clothing)",
)
HMS_VOTES = ("seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote")
JIGSAW_IDENTITIES = ("male", "female", "homosexual_gay_or_lesbian", "christian", "jewish", "muslim", "black", "white",
                     "psychiatric_or_mental_illness")
LABEL_SET_NOTE = (
    "Micro-averaged F1 over space-separated label sets, as MLE-bench computes it: only labels that occur in "
    "the answers are classes, so a predicted label that occurs nowhere in the answers is ignored, not counted "
    "as a false positive; a label repeated within a row counts once; an empty cell predicts no labels. A column "
    "that pandas reads as numbers (one numeric label per row) makes MLE-bench's .str.split() fail, so MLE-bench "
    "would call the file invalid; this grader reads the labels as text, and the report says so."
)


# One label, probability or number per id, or one per column: scored by a per-row metric.
LABELS_AND_COLUMNS: tuple[GraderSpec, ...] = (
    _mle("cassava-leaf-disease-classification", "accuracy", "image_id", ("label",), Values.INTEGER),
    _mle("cdiscount-image-classification-challenge", "accuracy", "_id", ("category_id",), Values.INTEGER),
    _mle("iwildcam-2020-fgvc7", "accuracy", "Id", ("Category",), Values.INTEGER),
    _mle("ml2021spring-hw2", "accuracy", "Id", ("ClassId",), Values.INTEGER),
    _mle("herbarium-2021-fgvc8", "f1-macro", "Id", ("Predicted",), Values.INTEGER),
    _mle("herbarium-2022-fgvc9", "f1-macro", "Id", ("Predicted",), Values.INTEGER),
    _mle("iwildcam-2019-fgvc6", "f1-macro", "Id", ("Category",), Values.INTEGER),
    _mle("plant-seedlings-classification", "f1-micro", "file", ("species",), Values.TEXT,
         notes=("Micro-averaged F1 of one species per image equals accuracy.",)),
    _mle("inaturalist-2019-fgvc6", "top-1-error", "id", ("predicted",), Values.TEXT,
         notes=("Only the first class id of each 'predicted' cell counts (Kaggle allowed five, space-separated); "
                "the score is 1 - accuracy, lower is better.",)),
    _mle("lmsys-chatbot-arena", "multi-class-log-loss", "id", LMSYS_CLASSES, Values.PROBABILITY,
         rows_sum_to_one=True, row_sum_decimals=6),
    _mle("google-quest-challenge", "mean-column-wise-spearman", "qa_id", GOOGLE_QUEST_CLASSES, Values.NUMBER,
         exact_columns=True, alignment=Align.SORT_UNCHECKED,
         notes=("MLE-bench does not check qa_id here: it sorts both files by qa_id and compares by position. "
                "A constant prediction column makes Spearman's rho, and so the score, undefined.",)),
    _mle("playground-series-s3e18", "mean-column-wise-roc-auc", "id", ("EC1", "EC2"), Values.NUMBER,
         notes=("Like MLE-bench, EC1 and EC2 may be any numbers (scores), not only probabilities.",)),
    _mle("nfl-player-contact-detection", "mcc", "contact_id", ("contact",), Values.INTEGER),
    _mle("icecube-neutrinos-in-deep-ice", "mean-angular-error", "event_id", ("azimuth", "zenith"), Values.NUMBER,
         exact_columns=True),
    _mle("stanford-covid-vaccine", "mean-column-wise-rmse", "id_seqpos", ("reactivity", "deg_Mg_pH10", "deg_Mg_50C"),
         Values.NUMBER, scored_rows_column="keep", required_columns=("deg_pH10", "deg_50C"),
         notes=("The config's grader.name says multi-class-log-loss, but MLE-bench's grade.py computes MCRMSE: the "
                "mean over reactivity, deg_Mg_pH10 and deg_Mg_50C of the RMSE on the answers' rows marked keep. "
                "deg_pH10 and deg_50C must be present but are not scored.",
                "MLE-bench applies the keep mask to its id-sorted submission by row position in the file, not by "
                "id_seqpos: a submission whose rows are in another order than the answers is scored on the wrong "
                "rows there. This grader matches rows by id_seqpos, and the report gives MLE-bench's number "
                "when they differ.")),
    _mle("alaska2-image-steganalysis", "weighted-auc", "Id", ("Label",), Values.NUMBER,
         notes=("Weighted AUC as MLE-bench computes it: ROC area in the TPR bands [0, 0.4] and [0.4, 1], weighted "
                "2 and 1, with a vertex interpolated at TPR 0.4. Label may be any number (a score).",)),
)

# Ranked lists, label sets, text, sequences, grouped and multi-row answers.
LISTS_SETS_AND_GROUPS: tuple[GraderSpec, ...] = (
    _mle("hotel-id-2021-fgvc8", "mle-bench-map@5", "image", ("hotel_id",), Values.TEXT,
         notes=(MAP_SPLIT_NOTE,)),
    _mle("h-and-m-personalized-fashion-recommendations", "mle-bench-map@12", "customer_id", ("prediction",),
         Values.TEXT, exact_columns=True, extra_ids_ignored=True,
         notes=(MAP_SPLIT_NOTE,
                "Like MLE-bench, rows for customers that are not in the answers are ignored; every answers customer "
                "must be present. Unlike MLE-bench, which would then pair sorted rows by position, a repeated "
                "customer_id is rejected.",
                "The answers' purchases are a set: AP@12 divides by min(number of purchased articles, 12).")),
    _mle("imet-2020-fgvc7", "f1-micro-label-sets", "id", ("attribute_ids",), Values.TEXT, na_text_as_empty=True,
         notes=(LABEL_SET_NOTE,)),
    _mle("plant-pathology-2021-fgvc8", "f1-micro-label-sets", "image", ("labels",), Values.TEXT,
         na_text_as_empty=True, notes=(LABEL_SET_NOTE,)),
    _mle("facebook-recruiting-iii-keyword-extraction", "f1-micro-label-sets", "Id", ("Tags",), Values.TEXT,
         na_text_as_empty=True,
         notes=(LABEL_SET_NOTE,
                "Kaggle scored the mean F1 per question; MLE-bench's grade.py (and its config, micro-f1-score) use "
                "micro-averaged F1 over all tags, and so does this grader. A cell holding only an NA spelling "
                "('null', 'NA', 'nan', ...) predicts no tags, as pandas reads it as missing, even though 'null' "
                "is a real tag.")),
    _mle("freesound-audio-tagging-2019", "lwlrap", "fname", FREESOUND_CLASSES, Values.NUMBER, exact_columns=True,
         ordered_columns=True,
         notes=("Label-weighted label-ranking average precision (lwlrap), as MLE-bench computes it with "
                "scikit-learn: rows weighted by their number of labels, unlabelled rows left out. Like MLE-bench, "
                "the header must be fname and then the 80 classes in vocabulary order; scores may be any numbers.",)),
    _mle("champs-scalar-coupling", "mean-group-log-mae", "id", ("scalar_coupling_constant",), Values.NUMBER,
         context_columns=("type",),
         notes=("The mean over the answers' coupling types of log(MAE), as MLE-bench computes it (lower is better). "
                "MLE-bench merges the submission into the answers on id, so a repeated id would be scored twice; "
                "this grader rejects it, and the report gives the number MLE-bench would print.",
                "Each type's MAE is floored at 1e-9, as on Kaggle: a type predicted exactly scores log(1e-9) = "
                "-20.72 rather than MLE-bench's log(0) = -inf, so a perfect submission is valid and earns gold; "
                "the report then says MLE-bench would print -inf.")),
    _mle("hms-harmful-brain-activity-classification", "kl-divergence-of-votes", "eeg_id", HMS_VOTES,
         Values.PROBABILITY, rows_sum_to_one=True, row_sum_decimals=5, unique_ids=False,
         notes=("Kaggle's KL divergence, as MLE-bench computes it: the answers' expert votes are divided by "
                "their row total, predictions are clipped to [1e-15, 1 - 1e-15], and the row sums are averaged.",
                "The answers hold several rows per eeg_id. MLE-bench sorts both files by eeg_id (an unstable sort) "
                "and pairs rows by position; this grader pairs the rows of one eeg_id in file order, and requires "
                "each eeg_id to appear as often as in the answers (MLE-bench only compares the id sets and the "
                "total row count). Rows of one eeg_id have identical inputs, so the pairing only matters when "
                "their predictions differ.")),
    _mle("multi-modal-gesture-recognition", "gesture-edit-distance", "Id", ("Sequence",), Values.TEXT,
         na_text_as_nan=True,
         notes=("The sum over rows of the edit distance between the predicted and true sequences of gesture ids, "
                "divided by the number of true gestures, as MLE-bench computes it (the config's grader.name says "
                "levenhstein-distance). Like MLE-bench, every token must be an integer: an empty cell, which "
                "pandas reads as missing, is rejected rather than scored as no gestures.",)),
    _mle("jigsaw-unintended-bias-in-toxicity-classification", "jigsaw-bias-auc", "id", ("toxicity",), Values.NUMBER,
         submission_targets=("prediction",), context_columns=JIGSAW_IDENTITIES,
         notes=("Kaggle's bias-weighted AUC as MLE-bench computes it: 0.25 x overall AUC + 0.25 x each of the "
                "power mean (p = -5) over the nine identities of the subgroup, BPSN and BNSP AUCs. Unlike Kaggle, "
                "MLE-bench first turns every prediction into 0 or 1 (>= 0.5), so only which side of 0.5 a "
                "prediction falls matters; this grader does the same. Answers' toxicity and identity values are "
                "binarised at 0.5, a missing identity counting as 0.",
                "MLE-bench also accepts the column named toxicity instead of prediction, and scores a missing "
                "prediction as 0; this grader requires a prediction column of finite numbers.")),
    _mle("smartphone-decimeter-2022", "trip-haversine-p50-p95", "tripId", ("LatitudeDegrees", "LongitudeDegrees"),
         Values.NUMBER, unique_ids=False, required_columns=("UnixTimeMillis",), context_columns=("tripId",),
         notes=("Per trip, the mean of the 50th and 95th percentiles of the haversine distance (metres, radius "
                "6,371 km) between predicted and true positions; the score is the mean over trips, as MLE-bench "
                "computes it with the host's notebook (the config's grader.name, average-haversine-distance, "
                "undersells it: it is not a plain mean distance).",
                "Like MLE-bench, the rows of a trip are paired in file order: UnixTimeMillis must be present but "
                "is never compared, so a trip's rows must be in the answers' (time) order. Each trip must have as "
                "many rows as in the answers.")),
    _mle("billion-word-imputation", "levenshtein", "id", ("sentence",), Values.TEXT, na_text_rejected=True,
         notes=("The mean character-level Levenshtein distance between predicted and true sentences, as MLE-bench "
                "computes it. MLE-bench cannot grade a sentence cell that pandas reads as missing (empty, 'NA', "
                "'null', ...): this grader rejects such a submission with the rows at fault.",)),
    _mle("chaii-hindi-and-tamil-question-answering", "jaccard-samples", "id", ("PredictionString",), Values.TEXT,
         na_text_as_empty=True,
         notes=("Word-level Jaccard per row on lower-cased whitespace-split word sets, averaged, as MLE-bench "
                "computes it with scikit-learn's jaccard_score(average='samples'): a row where both the answer "
                "and the prediction are empty scores 0, not 1 (Kaggle's Jaccard would give 1). A cell holding "
                "only an NA spelling ('NA', 'null', ...) is read as empty, as pandas reads it.",)),
)

SPECS: dict[str, GraderSpec] = {spec.competition_id: spec
                                for spec in (*LITE, *OTHERS, *LABELS_AND_COLUMNS, *LISTS_SETS_AND_GROUPS, *STRUCTURED,
                                             *VISION)}


def grader_for(competition: Competition | str) -> GraderSpec | None:
    """The registered spec; for a Competition that has none, the generic spec of a custom competition."""
    if isinstance(competition, str):
        return SPECS.get(competition)
    return SPECS.get(competition.slug) or generic.generic_spec(competition)


def is_mle_bench(competition_id: str) -> bool:
    """One of MLE-bench's competitions: the product has a spec read from its grade.py for each."""
    return competition_id in SPECS


def grader_name(spec: GraderSpec) -> str:
    """Which grader a report came from, in words: the generic one, or the competition's own spec."""
    if spec.source == "generic":
        return f"generic grader (metric {spec.metric} from the competition's config)"
    return f"MLE-bench grader of {spec.competition_id} (spec from {spec.source})"


def grading_available(competition: Competition | str) -> bool:
    return grader_for(competition) is not None
