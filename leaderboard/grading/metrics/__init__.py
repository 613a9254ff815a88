"""The one metric registry: name -> function and direction.

Each metric takes aligned numpy arrays (answers first, submission second; 2-D for multi-column
metrics) and returns a float; a spec with context_columns passes those answers
columns as a third array.
Specs (leaderboard.grading.specs) refer to metrics by these names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MetricFn = Callable[["np.ndarray", "np.ndarray"], float]


@dataclass(frozen=True)
class Metric:
    """`function`: "module.name" in this package. Its module (numpy, scikit-learn, scipy) is imported
    when the metric is first computed, not when the registry is read: naming a competition's metric
    on a page or in a management command costs no second of imports."""

    name: str
    function: str
    lower_is_better: bool
    multi_column: bool = False

    @cached_property
    def fn(self) -> MetricFn:
        module, name = self.function.rsplit(".", 1)
        return getattr(import_module(f"{__name__}.{module}"), name)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("roc-auc", "auc.roc_auc", lower_is_better=False),
        Metric("mean-column-wise-roc-auc", "auc.mean_columnwise_roc_auc", lower_is_better=False, multi_column=True),
        Metric("log-loss", "logloss.binary_log_loss", lower_is_better=True),
        Metric("multi-class-log-loss", "logloss.multiclass_log_loss", lower_is_better=True, multi_column=True),
        Metric("rmse", "regression.rmse", lower_is_better=True),
        Metric("mean-column-wise-rmse", "regression.mean_columnwise_rmse", lower_is_better=True, multi_column=True),
        Metric("rmsle", "regression.rmsle", lower_is_better=True),
        Metric("mean-column-wise-rmsle", "regression.mean_columnwise_rmsle", lower_is_better=True, multi_column=True),
        Metric("mae", "regression.mae", lower_is_better=True),
        Metric("mle-bench-rounded-mae", "regression.mle_bench_rounded_mae", lower_is_better=True),
        Metric("mean-group-log-mae", "regression.mean_group_log_mae", lower_is_better=True),
        Metric("kl-divergence-of-votes", "logloss.kl_divergence_of_votes", lower_is_better=True, multi_column=True),
        Metric("quadratic-weighted-kappa", "kappa.quadratic_weighted_kappa", lower_is_better=False),
        Metric("weighted-auc", "auc.weighted_auc", lower_is_better=False),
        Metric("jigsaw-bias-auc", "auc.jigsaw_bias_auc", lower_is_better=False),
        Metric("accuracy", "classification.accuracy", lower_is_better=False),
        Metric("top-1-error", "classification.top1_error", lower_is_better=True),
        Metric("f1", "classification.f1_binary", lower_is_better=False),
        Metric("f1-micro", "classification.f1_micro", lower_is_better=False),
        Metric("f1-macro", "classification.f1_macro", lower_is_better=False),
        Metric("mcc", "classification.matthews", lower_is_better=False),
        Metric("map@5", "ranking.map_at_5", lower_is_better=False),
        Metric("mle-bench-map@5", "ranking.mle_bench_map_at_5", lower_is_better=False),
        Metric("mle-bench-map@12", "ranking.mle_bench_map_at_12", lower_is_better=False),
        Metric("lwlrap", "ranking.lwlrap", lower_is_better=False, multi_column=True),
        Metric("f1-micro-label-sets", "label_sets.f1_micro_label_sets", lower_is_better=False),
        Metric("pearson", "correlation.pearson", lower_is_better=False),
        Metric("spearman", "correlation.spearman", lower_is_better=False),
        Metric("mean-column-wise-spearman", "correlation.mean_columnwise_spearman", lower_is_better=False,
               multi_column=True),
        Metric("trip-haversine-p50-p95", "geodesic.trip_haversine_p50_p95", lower_is_better=True, multi_column=True),
        Metric("mean-angular-error", "angular.mean_angular_error", lower_is_better=True, multi_column=True),
        Metric("jaccard", "text.mean_jaccard", lower_is_better=False),
        Metric("jaccard-samples", "text.mean_jaccard_samples", lower_is_better=False),
        Metric("levenshtein", "text.mean_levenshtein", lower_is_better=True),
        Metric("gesture-edit-distance", "text.gesture_edit_distance", lower_is_better=True),
        Metric("probabilistic-f1", "classification.probabilistic_f1", lower_is_better=False),
        Metric("cervical-weighted-log-loss", "logloss.cervical_weighted_log_loss", lower_is_better=True),
        Metric("osic-laplace-log-likelihood", "likelihood.osic_latest_weeks", lower_is_better=False, multi_column=True),
        Metric("kendall-tau-orders", "ranking.kendall_tau_orders", lower_is_better=False),
        Metric("qa-micro-f1", "qa.qa_micro_f1", lower_is_better=False),
        Metric("iou-sweep-rle", "rle.iou_sweep", lower_is_better=False),
        Metric("mean-dice-rle", "rle.mean_dice", lower_is_better=False),
        Metric("global-dice-rle", "rle.global_dice", lower_is_better=False),
        Metric("mean-f05-rle", "rle.mean_f05", lower_is_better=False),
        Metric("dice-hausdorff-3d", "rle.dice_hausdorff", lower_is_better=False),
        Metric("siim-map", "detection.siim_map", lower_is_better=False),
        Metric("coco-map@0.4", "detection.coco_map", lower_is_better=False),
        Metric("kuzushiji-f1", "detection.kuzushiji_f1", lower_is_better=False),
        Metric("lyft-3d-map", "boxes3d.lyft_map", lower_is_better=False),
    )
}


def get_metric(name: str) -> Metric:
    return METRICS[name]
