"""manage.py import_seed_json DIR — import the seed application's JSON stores."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from staff.seed_import import BadFile, SeedImporter, describe


class Command(BaseCommand):
    help = (
        "Import the seed's JSON stores from DIR: user_memory/<user>.json, sessions/<user>.json, "
        "user_profiles/<user>.json, knowledge_<user>_<category>.json and summaries.json. "
        "A rerun adds nothing twice; a bad file is reported and skipped; missing users are "
        "created with an unusable password."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path, help="The directory the seed wrote to.")
        parser.add_argument(
            "--dry-run", action="store_true", help="Read and check everything, save nothing."
        )
        parser.add_argument(
            "--summaries-user",
            help="Whose summaries summaries.json holds (default: the directory's only user).",
        )

    def handle(self, *args, directory: Path, dry_run: bool, summaries_user: str | None, **options):
        importer = SeedImporter(
            directory, dry_run=dry_run, summaries_user=summaries_user, write=self.stdout.write
        )
        try:
            report = importer.run()
        except BadFile as error:
            raise CommandError(str(error)) from error
        self.stdout.write(self.summary(report, dry_run=dry_run))
        for name, reason in report.bad:
            self.stderr.write(f"Skipped {name}: {reason}")

    @staticmethod
    def summary(report, *, dry_run: bool) -> str:
        made = describe(report.created)
        ok = report.files - len(report.bad)
        line = f"{ok} of {report.files} files imported"
        if report.bad:
            line += f", {len(report.bad)} skipped"
        line += f"; created {made or 'nothing new'}."
        if dry_run:
            line += " Dry run: nothing was saved."
        return line
