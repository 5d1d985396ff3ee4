"""Writing the files frugalml produces (model files, C headers, prediction and cost CSVs) without losing the old
one: through a temporary file renamed over it, so a write that fails (a full disk) leaves the previous file whole."""

from __future__ import annotations

from pathlib import Path

from pyruntime.errors import OutputError


def write_file(path: str | Path, data: bytes | str) -> int:
    """``data`` (text: UTF-8) into ``path``; returns the bytes written. A temporary file beside the target (a
    symlink's target: the link stays) is renamed over it; an existing path that is not a regular file (/dev/stdout,
    a FIFO) is written in place, since a rename would replace the device. OutputError (an OSError) names the path
    on failure, and no temporary file is left."""
    blob = data.encode() if isinstance(data, str) else data
    p = Path(path)
    try:
        if p.exists() and not p.is_file():
            with p.open("wb") as fh:
                fh.write(blob)
            return len(blob)
        real = p.resolve()
        tmp = real.with_name(real.name + ".tmp")
        try:
            tmp.write_bytes(blob)
            tmp.replace(real)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        err = OutputError(f"cannot write {path}: {exc.strerror or exc}")
        err.errno = exc.errno
        raise err from None
    return len(blob)
