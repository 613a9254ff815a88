"""Specs for the segmentation (run-length-encoded masks) and detection competitions, each read from
MLE-bench's grade.py and prepare.py for the competition (source="mle-bench grade.py"), quirks in the notes."""

from __future__ import annotations

from .specs import Align, GraderSpec, Values, _mle

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

VISION: tuple[GraderSpec, ...] = SEGMENTATION
