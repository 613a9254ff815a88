"""Specs for the segmentation (run-length-encoded masks) and detection competitions, each read from
MLE-bench's grade.py and prepare.py for the competition (source="mle-bench grade.py"), quirks in the notes."""

from __future__ import annotations

from .spec_common import _mle
from .spec_types import Align, GraderSpec, Values

RLE_NOTE = ("Masks are run-length encoded as MLE-bench reads them: 'start length' pairs, 1-based, down each "
            "column then right; the pairs must be sorted, positive and must not overlap, or the file is invalid. "
            "A run past the image's end is cut there, as MLE-bench's decoder does.")

SEGMENTATION: tuple[GraderSpec, ...] = (
    _mle("tgs-salt-identification-challenge", "iou-sweep-rle", "id", ("rle_mask",), Values.TEXT, exact_columns=True,
         na_text_as_empty=True,
         notes=(RLE_NOTE,
                "Per image, the share of the IoU thresholds 0.5, 0.55, ..., 0.95 that the mask's IoU exceeds, "
                "averaged over images, as MLE-bench computes it: 1 when both masks are empty, 0 for a mask on an "
                "empty image. MLE-bench's histogram IoU counts an empty prediction on an image with salt as the "
                "whole image (IoU = salt area / 10,201), so it can score when salt covers over half the image; "
                "Kaggle scored it 0. This grader follows MLE-bench.")),
    _mle("hubmap-kidney-segmentation", "mean-dice-rle", "id", ("encoding",), Values.TEXT,
         submission_targets=("predicted",), context_columns=("height_pixels", "width_pixels"), na_text_as_empty=True,
         notes=(RLE_NOTE,
                "The mean over images of the Dice coefficient (1 when both masks are empty), as MLE-bench "
                "computes it; an empty cell is an empty mask.")),
    _mle("google-research-identify-contrails-reduce-global-warming", "global-dice-rle", "record_id",
         ("encoded_pixels",), Values.TEXT, context_columns=("height", "width"), na_text_rejected=True,
         notes=(RLE_NOTE,
                "One Dice coefficient over all pixels of all images (global Dice), as MLE-bench computes it; '-' "
                "is an empty mask. Like MLE-bench, an empty cell (which pandas reads as missing) makes the file "
                "invalid: write '-'.")),
    _mle("vesuvius-challenge-ink-detection", "mean-f05-rle", "Id", ("Predicted",), Values.TEXT, exact_columns=True,
         context_columns=("height", "width"), na_text_rejected=True, rows_in_answers_order=True,
         notes=(RLE_NOTE,
                "The mean over fragments of the pixel F0.5 score, as MLE-bench computes it with scikit-learn "
                "(0 when no pixel is predicted or no predicted pixel is right). Like MLE-bench, the file must hold "
                "exactly Id and Predicted, rows in the sample submission's order, and no empty mask cell. "
                "Vesuvius' masks run along rows, not columns; the score does not depend on the order.")),
    _mle("uw-madison-gi-tract-image-segmentation", "dice-hausdorff-3d", "id", ("predicted",), Values.TEXT,
         submission_targets=("id", "predicted"), alignment=Align.POSITIONAL, unique_ids=False,
         required_columns=("class",),
         context_columns=("id", "image_height", "image_width"), na_text_as_empty=True,
         notes=(RLE_NOTE,
                "0.4 x the mean Dice per row (rows where both masks are empty left out) + 0.6 x (1 - the mean "
                "normalised 3-D Hausdorff distance per case and day, with the classes of a slice merged), as "
                "MLE-bench computes it, shortcuts included: a Hausdorff distance is 1 when one volume is empty "
                "or the prediction is over 10 times the truth.",
                "Like MLE-bench, the Dice pairs rows by position and never compares id or class, while the "
                "Hausdorff distance groups each file's rows into volumes by its own ids: rows must be in the "
                "sample submission's order (a note says when the ids differ). MLE-bench silently drops the "
                "surplus rows of a longer file; this grader rejects a file with the wrong number of rows.")),
)

DETECTION: tuple[GraderSpec, ...] = (
    _mle("siim-covid19-detection", "siim-map", "id", ("PredictionString",), Values.TEXT, na_text_rejected=True,
         notes=("Mean average precision at IoU > 0.5 as MLE-bench computes it: study and image rows together, each "
                "class of the answers ('negative', 'typical', 'indeterminate', 'atypical', 'none', 'opacity') a "
                "class of its own; per class, predicted boxes (most confident first) match the unused true box "
                "with the highest IoU, a missed true box counts as a positive scored 0, an image with neither "
                "adds a negative scored 0, and scikit-learn's average precision is taken over all pairs. Kaggle "
                "scored studies and images differently (mAP of study classes + of opacity boxes).",
                "Like MLE-bench, every row needs at least one 'label confidence x_min y_min x_max y_max' group; "
                "an empty cell makes the file invalid.")),
    _mle("vinbigdata-chest-xray-abnormalities-detection", "coco-map@0.4", "image_id", ("boxes",), Values.TEXT,
         submission_targets=("PredictionString",), answers_layout="boxes-per-image", na_text_rejected=True,
         notes=("COCO's mean average precision at IoU 0.4, as MLE-bench computes it with pycocotools (up to 100 "
                "detections per image and class; classes without a true box left out). Like MLE-bench, the "
                "corners (x_min, y_min, x_max, y_max) are handed to COCO as (x, y, width, height), so boxes are "
                "compared as if stretched, and the true box MLE-bench numbers 0 (the answers' first) never "
                "counts as found: a perfect submission scores just under 1.",
                "MLE-bench numbers the submission's first prediction 0 too, which lets the true box it matches be "
                "matched once more; this grader lets each true box be found once, and the report gives the "
                "number MLE-bench would print when that differs. "
                "MLE-bench also pools the predictions of a repeated image_id; this grader rejects the repeat.",
                "Every row needs at least one 'class_id score x_min y_min x_max y_max' group (a 'no finding' "
                "image: '14 1 0 0 1 1'); an empty cell makes the file invalid, as it does for MLE-bench.")),
    _mle("3d-object-detection-for-autonomous-vehicles", "lyft-3d-map", "Id", ("PredictionString",), Values.TEXT,
         na_text_as_empty=True,
         notes=("The host's 3-D mAP as MLE-bench computes it: per sample (row), for each class among its true "
                "boxes, the all-point average precision of its predicted boxes (most confident first; a box is a "
                "true positive when its best IoU, over all true boxes of the class, exceeds the threshold and "
                "that true box is still free), 0 for a class not predicted; the mean over classes, then over "
                "samples and the IoU thresholds 0.5, 0.55, ..., 0.95. Kaggle pooled all samples per class "
                "instead of averaging per sample.",
                "Boxes are 'confidence center_x center_y center_z width length height yaw class_name', single "
                "spaces; an empty cell predicts nothing. MLE-bench only checks the boxes of classes a sample "
                "truly holds; this grader rejects any box with a non-finite value or a size that is not "
                "positive.")),
    _mle("kuzushiji-recognition", "kuzushiji-f1", "image_id", ("labels",), Values.TEXT, na_text_as_empty=True,
         notes=("F1 over all pages as MLE-bench computes it with the host's metric: a predicted 'unicode x y' "
                "centre point is right when it lies strictly inside a true box of the same character that no "
                "earlier point took; an empty cell is a page without characters. Groups are split on single "
                "spaces, so a double space makes the file invalid.",)),
)

VISION: tuple[GraderSpec, ...] = (*SEGMENTATION, *DETECTION)
