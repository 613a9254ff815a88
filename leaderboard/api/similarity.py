"""A run's closest matches by code similarity, as the run detail serves them (`similar_runs`,
`similar_references`); leaderboard.trust.similarity finds them and filters by visibility."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from leaderboard.models import Run
from leaderboard.trust import similarity


class SimilarRunSerializer(serializers.Serializer):
    run = serializers.IntegerField(help_text="The other run's id")
    similarity = serializers.FloatField(help_text="Hashes both hold / the smaller fingerprint's size, 0-1")
    shared = serializers.IntegerField(help_text="Fingerprint hashes both hold")
    compare_url = serializers.CharField(help_text="The side-by-side page of the matching regions")


class SimilarReferenceSerializer(serializers.Serializer):
    reference = serializers.IntegerField()
    label = serializers.CharField(help_text="Where the reference code comes from, as its maintainer named it")
    similarity = serializers.FloatField()
    shared = serializers.IntegerField()
    compare_url = serializers.CharField()


def similar_payload(run: Run, user) -> dict:
    """{"similar_runs": [...], "similar_references": [...]}: one query."""
    runs, references = [], []
    for m in similarity.matches_for(run, user):
        common = {"similarity": round(m.similarity, 4), "shared": m.shared}
        if m.run is not None:
            url = reverse("run-similar", args=[run.pk, m.run.pk])
            runs.append({"run": m.run.pk, **common, "compare_url": url})
        else:
            url = reverse("run-similar-reference", args=[run.pk, m.reference.pk])
            references.append({"reference": m.reference.pk, "label": m.reference.label, **common, "compare_url": url})
    return {"similar_runs": runs, "similar_references": references}
