"""An earlier revision of the project, checked out beside this one: served by
benchmarks.ab, or benchmarked by its own code so that a figure can stand beside the same
figure now, measured in the same sitting on the same machine."""

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.common import REPO


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """The work tree itself for `.`, else a detached worktree of `rev`, removed after,
    with ../shared beside it as beside this one (the NDC schemas, the SSIM file)."""
    if rev == ".":
        yield REPO
        return
    with tempfile.TemporaryDirectory(prefix="earlier-") as parent:
        tree = Path(parent) / "tree"
        if (REPO.parent / "shared").is_dir():
            (Path(parent) / "shared").symlink_to(REPO.parent / "shared")
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(tree), rev], cwd=REPO, check=True
        )
        try:
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO)


def figures_at(rev: str, module: str, env: dict[str, str]) -> dict[str, list[list[str]]]:
    """Run `python -m benchmarks.<module>` as revision `rev` has it (its code and its
    benchmark, in this interpreter) with `env` over this environment, and read back the
    tables it wrote: {title: [header, *rows]}. `env` names the run's own scratch
    database (BENCH_DATABASE) and key prefix, so that it never meets this run's."""
    with checkout(rev) as tree, tempfile.TemporaryDirectory(prefix="figures-") as figures:
        environment = {
            **os.environ,
            **env,
            # What prepare_environment derives from BENCH_DATABASE, unless DATABASE_URL is
            # set already: as it is in this process once it has prepared its own.
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{env['BENCH_DATABASE']}",
            "BENCH_FIGURES_DIR": figures,
            "PYTHONPATH": str(tree),
            "AIRLINE_VAR_DIR": str(Path(figures) / "var"),
        }
        subprocess.run(
            [sys.executable, "-m", f"benchmarks.{module}"], cwd=tree, env=environment, check=True
        )
        return markdown_tables((Path(figures) / f"{module}.md").read_text())


def markdown_tables(text: str) -> dict[str, list[list[str]]]:
    """The tables of a figures file (benchmarks.common.write_figures): {title: rows},
    the header row first, each cell as written."""
    found: dict[str, list[list[str]]] = {}
    title = None
    for line in text.splitlines():
        if line.startswith("**") and line.endswith("**"):
            title = line.strip("*")
            found[title] = []
        elif line.startswith("| ") and title is not None:
            found[title].append([cell.strip() for cell in line.strip("|").split(" | ")])
    return found
