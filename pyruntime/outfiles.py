"""Writing the files frugalml produces (model files, C headers, prediction and cost CSVs) without losing the old
one: through a temporary file renamed over it, so a write that fails (a full disk) leaves the previous file whole."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pyruntime.errors import OutputError


def new_file_mode() -> int:
    """What a plain open() gives a new file: 0666 less the umask (mkstemp's own is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _file_mode(real: Path) -> int:
    """The mode the written file gets: the old file's, else a new file's; mkstemp's 0600 would make a model file
    unreadable to the other users that read the old one."""
    try:
        return real.stat().st_mode & 0o7777
    except OSError:
        return new_file_mode()


def write_file(path: str | Path, data: bytes | str) -> int:
    """``data`` (text: UTF-8) into ``path``; returns the bytes written. A temporary file of a new name beside the
    target (a symlink's target: the link stays) is renamed over it; an existing path that is not a regular file
    (/dev/stdout, a FIFO) is written in place, since a rename would replace the device. OutputError (an OSError)
    names the path on failure, and no temporary file is left."""
    blob = data.encode() if isinstance(data, str) else data
    p = Path(path)
    try:
        if p.exists() and not p.is_file():
            with p.open("wb") as fh:
                fh.write(blob)
            return len(blob)
        real = p.resolve()
        # a new name of its own (not OUTPUT.tmp: a file of that name, perhaps one of the command's inputs, was
        # overwritten and renamed away, round 68)
        fd, name = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
        os.close(fd)
        tmp = Path(name)
        try:
            tmp.write_bytes(blob)
            tmp.chmod(_file_mode(real))
            tmp.replace(real)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        err = OutputError(f"cannot write {path}: {exc.strerror or exc}")
        err.errno = exc.errno
        raise err from None
    return len(blob)
