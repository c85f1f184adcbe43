"""The calculator's documents kept between processes (generator/analysis/kept_exports.py): a kept document is
the one the code works, its key changes with every source it is made from, and none is kept from changed code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.analysis import calculator_data, kept_exports
from generator.counting import texts


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder to keep documents in, for this process (the suite keeps none in its own processes)."""
    monkeypatch.setattr(kept_exports, "FOLDER", str(tmp_path / "kept"))
    monkeypatch.setattr(kept_exports, "LOADED", kept_exports._stamp())
    return tmp_path / "kept"


def test_a_kept_document_is_read_back_as_the_code_works_it(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    worked = calculator_data.export_text.__wrapped__("albert", "zh")  # type: ignore[attr-defined]
    assert calculator_data.export_text("albert", "zh") == worked
    kept = list(folder.iterdir())
    assert len(kept) == 1 and kept[0].read_bytes() == worked.encode("utf-8")
    monkeypatch.setattr(calculator_data, "_export", None)  # working it again would fail: it is read
    assert calculator_data.export_text("albert", "zh") == worked
    with pytest.raises(TypeError):  # another family's is worked, not read
        calculator_data.export_text("bert", "zh")


def test_nothing_is_kept_once_a_source_changed_under_the_process(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, *others = kept_exports.LOADED
    monkeypatch.setattr(kept_exports, "LOADED", ((first[0], first[1] + 1, first[2]), *others))
    assert calculator_data.export_text("albert", "zh") == calculator_data.export_text.__wrapped__("albert", "zh")  # type: ignore[attr-defined]
    assert not folder.exists()


@pytest.mark.parametrize(("module", "name"), [(kept_exports, "GENERATOR"), (texts, "CONTENT")])
def test_the_key_changes_with_the_code_the_words_and_the_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: object, name: str
) -> None:
    def key(*parts: str) -> str:
        kept_exports._fingerprint.cache_clear()
        return kept_exports._key(parts)

    before = key("export_text", "('bert', 'en')")
    assert key("export_text", "('bert', 'en')") == before
    assert key("export_text", "('bert', 'zh')") != before
    copy = tmp_path / name
    shutil.copytree(getattr(module, name), copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(module, name, copy)
    assert key("export_text", "('bert', 'en')") == before  # the same bytes elsewhere: the same key
    source = next(p for p in sorted(copy.rglob("*")) if p.suffix in (".py", ".yaml"))
    source.write_bytes(source.read_bytes() + b"\n")
    assert key("export_text", "('bert', 'en')") != before
    monkeypatch.undo()
    assert key("export_text", "('bert', 'en')") == before
