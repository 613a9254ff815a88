from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Competition
from leaderboard.trust import similarity

MAX_FILE_BYTES = 4 * 1024 * 1024


class Command(BaseCommand):
    help = ("Register reference code for a competition (e.g. downloaded top Kaggle notebooks, .py or .ipynb): "
            "every run of it is compared with these files, now and when later runs are indexed.")

    def add_arguments(self, parser):
        parser.add_argument("competition", help="Competition id, e.g. spaceship-titanic")
        parser.add_argument("files", nargs="+", help="Code files")
        parser.add_argument("--label", required=True, help="Where the code comes from, e.g. 'Kaggle: top notebook'")

    def handle(self, *args, competition, files, label, **options):
        found = Competition.objects.filter(slug=competition).first()
        if found is None:
            raise CommandError(f"unknown competition {competition!r}")
        for name in files:
            code = self._read(Path(name))
            reference = similarity.add_reference(competition=found, label=label, name=Path(name).name, code=code)
            self.stdout.write(f"{name}: reference {reference.pk}, {reference.fingerprint.size} fingerprints")

    @staticmethod
    def _read(path: Path) -> str:
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CommandError(f"{path} is larger than {MAX_FILE_BYTES:,} bytes")
        raw = path.read_bytes()
        if b"\x00" in raw:
            raise CommandError(f"{path} is not a text file")
        text = raw.decode("utf-8", "replace")
        return similarity.notebook_code(text) if path.suffix.lower() == ".ipynb" else text
