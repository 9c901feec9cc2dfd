"""Root's sandbox state is out of other local accounts' reach: nothing under a world-writable
TMPDIR redirects or breaks a sandbox run, and the state dir is refused unless private."""

import ctypes
import os
import stat
import sys
from pathlib import Path

import pytest
from waits import ROOMY_S, run_command

from sandboxes import bwrap, inspect_bwrap, workdir

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root's sandbox state: the harness is not root here")

NOBODY = 65534
OLD_LOCKS = "conductor-bench-bwrap-uids"  # the per-uid lock dir's old fixed name under TMPDIR
RUN = (
    "import asyncio; from sandboxes.bwrap import BwrapRunner; "
    f"r = asyncio.run(BwrapRunner().run(['echo', 'ran'], timeout={ROOMY_S})); print(r.returncode, r.stdout.strip())"
)


@pytest.fixture
def shared_tmp(tmp_path):
    """A world-writable sticky TMPDIR, like /tmp, holding another account's plants."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    return tmp


def plant(tmp: Path, kind: str, target: Path) -> None:
    """What another account (uid 65534) leaves at the old lock names before root runs."""
    locks = tmp / OLD_LOCKS
    if kind == "dir_link":
        target.mkdir()
        locks.symlink_to(target)
        os.lchown(locks, NOBODY, NOBODY)
        return
    locks.mkdir(mode=0o777)
    os.chown(locks, NOBODY, NOBODY)
    lock = locks / "0.lock"
    lock.symlink_to(target) if kind == "lock_link" else lock.mkdir()
    os.lchown(lock, NOBODY, NOBODY)


@pytest.mark.parametrize("kind", ["lock_link", "lock_dir", "dir_link"])
def test_planted_old_lock_names_neither_redirect_nor_break_a_run(shared_tmp, tmp_path, kind):
    bwrap.check_bwrap()
    target = tmp_path / "target"
    plant(shared_tmp, kind, target)
    env = {**os.environ, "TMPDIR": str(shared_tmp)}
    proc = run_command([sys.executable, "-c", RUN], env=env)
    assert proc.stdout.split() == ["0", "ran"], proc.stderr[-2000:]
    assert list(target.iterdir()) == [] if kind == "dir_link" else not target.exists()  # root made nothing there


def test_state_dir_is_made_root_owned_0700_whatever_the_umask(tmp_path):
    old = os.umask(0o777)
    try:
        fd = bwrap.private_dir(str(tmp_path), "state")
    finally:
        os.umask(old)
    os.close(fd)
    st = os.lstat(tmp_path / "state")
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700


@pytest.mark.parametrize("kind", ["other_owner", "open_mode", "link", "file"])
def test_a_state_dir_that_is_not_private_is_refused_with_the_fix(tmp_path, kind):
    path = tmp_path / "state"
    if kind == "link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        path.symlink_to(tmp_path / "elsewhere")
    elif kind == "file":
        path.write_text("")
    else:
        path.mkdir(mode=0o700)
        os.chown(path, NOBODY, 0) if kind == "other_owner" else path.chmod(0o755)
    with pytest.raises(bwrap.BwrapUnavailableError, match="Fix:") as error:
        bwrap.private_dir(str(tmp_path), "state")
    assert str(path) in str(error.value)


def test_a_state_dir_in_a_parent_others_can_write_is_refused(shared_tmp):
    with pytest.raises(bwrap.BwrapUnavailableError, match="Fix:") as error:
        bwrap.private_dir(str(shared_tmp), "state")
    assert str(shared_tmp) in str(error.value) and not (shared_tmp / "state").exists()


def test_leases_lock_in_the_private_state_dir(monkeypatch, tmp_path):
    monkeypatch.setattr(bwrap, "_STATE_DIR", (str(tmp_path), "locks"))
    lease = bwrap.lease_uid()
    try:
        locks = sorted(p.name for p in (tmp_path / "locks").iterdir())
        assert f"{lease.uid - bwrap._UID_BASE}.lock" in locks
        assert stat.S_IMODE(os.lstat(tmp_path / "locks").st_mode) == 0o700
    finally:
        lease.release()


@pytest.fixture
def tmpfs(tmp_path):
    """A real mount point (a tiny tmpfs), unmounted afterwards."""
    mount = tmp_path / "mounted"
    mount.mkdir()
    try:
        workdir.mount_tmpfs(str(mount), size=1 << 20, inodes=64, uid=0)
    except OSError as error:
        pytest.skip(f"cannot mount a tmpfs here: {error}")
    yield mount
    ctypes.CDLL(None, use_errno=True).umount2(str(mount).encode(), 2)


def test_unmount_never_follows_a_link_swapped_in_after_a_check(tmpfs, tmp_path, monkeypatch):
    link = tmp_path / f"{inspect_bwrap._DIR_PREFIX}swapped"
    link.symlink_to(tmpfs)
    monkeypatch.setattr(os.path, "ismount", lambda path: True)  # it was a mount point when checked
    workdir.unmount(str(link))
    monkeypatch.undo()
    assert os.path.ismount(tmpfs)


async def test_cli_cleanup_leaves_other_accounts_entries_alone(shared_tmp, tmpfs, monkeypatch):
    monkeypatch.setattr(inspect_bwrap.tempfile, "tempdir", str(shared_tmp))
    theirs = shared_tmp / f"{inspect_bwrap._DIR_PREFIX}theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    os.chown(theirs, NOBODY, NOBODY)
    (shared_tmp / f"{inspect_bwrap._DIR_PREFIX}link").symlink_to(tmpfs)
    ours = Path(inspect_bwrap.tempfile.mkdtemp(prefix=inspect_bwrap._DIR_PREFIX))
    await inspect_bwrap.BwrapSandboxEnvironment.cli_cleanup(None)
    assert (theirs / "notes.txt").read_text() == "mine"
    assert os.path.ismount(tmpfs) and not ours.exists()
