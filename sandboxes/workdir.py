"""The Inspect `bwrap` sandbox's work dir, seen from the host (which may be root).

The sandbox changes the dir while the host works on it (two commands at once), so every
host-side operation goes through directory fds opened component by component with
O_NOFOLLOW (no path is ever resolved by name as root, `..` is refused), accepts only
regular files (a FIFO, socket or device is refused, never waited on: O_NONBLOCK), and
hands what it creates to the sample's uid by fd. When root, the dir is a tmpfs capped
in bytes and inodes; otherwise it is a plain host dir (see docs/sandbox.md).
No Inspect import here.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from pathlib import PurePosixPath

__all__ = ["mount_tmpfs", "open_file", "split", "unmount"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_MS_NOSUID, _MS_NODEV, _MNT_DETACH, _UMOUNT_NOFOLLOW = 0x2, 0x4, 0x2, 0x8


def split(rel: str) -> list[str]:
    """The components of a path relative to the work dir; PermissionError for `..`."""
    parts = [p for p in PurePosixPath(rel).parts if p not in ("", ".")]
    if any(p == ".." or "/" in p for p in parts):
        raise PermissionError(f"path escapes the sandbox work dir: {rel!r}")
    return parts


def _open_at(name: str, flags: int, dir_fd: int, what: str) -> int:
    try:
        return os.open(name, flags, 0o644, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise PermissionError(f"{what!r} is a symbolic link; the host never follows the sandbox's links") from None
        raise


def _open_dir(root: str, parts: list[str], *, create: bool, owner: int | None) -> int:
    fd = os.open(root, _DIR)
    try:
        for i, name in enumerate(parts):
            if create:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                    made = True
                except FileExistsError:
                    made = False
            sub = _open_at(name, _DIR, fd, "/".join(parts[: i + 1]))
            os.close(fd)
            fd = sub
            if create and made and owner is not None:
                os.fchown(fd, owner, owner)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_file(root: str, rel: str, *, write: bool, owner: int | None = None) -> int:
    """An fd on the regular file `rel` under `root` (created and truncated when `write`).

    Raises IsADirectoryError for a directory and PermissionError for a link, a
    non-regular file or a path outside the work dir. `owner` gets what is created.
    """
    parts = split(rel)
    if not parts:
        raise IsADirectoryError(rel)
    dfd = _open_dir(root, parts[:-1], create=write, owner=owner)
    try:
        flags = _FILE | (os.O_WRONLY | os.O_CREAT if write else os.O_RDONLY)
        fd = _open_at(parts[-1], flags, dfd, rel)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a socket, or a FIFO nobody reads (for writing)
            raise _not_regular(rel) from None
        if e.errno == errno.EISDIR:
            raise IsADirectoryError(rel) from None
        raise
    finally:
        os.close(dfd)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(rel)
        if not stat.S_ISREG(mode):
            raise _not_regular(rel)
        if write:
            if owner is not None:
                os.fchown(fd, owner, owner)
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _not_regular(rel: str) -> PermissionError:
    return PermissionError(f"{rel!r} is not a regular file (a FIFO, socket or device); refused")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def mount_tmpfs(path: str, *, size: int, inodes: int, uid: int) -> None:
    """Mount a tmpfs of `size` bytes and `inodes` inodes on `path`, root dir owned by `uid` (root only)."""
    opts = f"size={size},nr_inodes={inodes},mode=0700,uid={uid},gid={uid}".encode()
    if _libc().mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"cannot mount the sandbox work dir's tmpfs on {path}: {os.strerror(e)}")


def unmount(path: str) -> None:
    """Detach a mount made by mount_tmpfs (no-op when `path` is not a mount point). Never
    follows a link at `path`: one swapped in there cannot redirect root's unmount."""
    _libc().umount2(path.encode(), _MNT_DETACH | _UMOUNT_NOFOLLOW)  # EINVAL when not mounted
