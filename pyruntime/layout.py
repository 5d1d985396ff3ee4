"""The runtime's structs read from the cdef text (pyruntime/cdefs, the declarations the cffi binding is
built from), without the compiled binding: field names in declaration order and the size and alignment
of a struct on a target of a given pointer size. compiler.header writes initializers and counts flash
bytes from this; tests/test_rooms.py checks it against the binding's sizeof / offsetof."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from pyruntime.build_cffi import cdef_files

SCALARS = {"double": 8, "float": 4, "int64_t": 8, "uint64_t": 8, "int32_t": 4, "uint32_t": 4, "int16_t": 2,
           "uint16_t": 2, "int8_t": 1, "uint8_t": 1, "char": 1, "int": 4, "unsigned int": 4}


@dataclass(frozen=True)
class Field:
    name: str
    ctype: str  # without const or pointer stars
    pointer: bool
    count: int  # elements of a fixed-length array field, 1 otherwise


_TYPEDEF = re.compile(r"typedef\s+(struct|enum)\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
_FNPTR = re.compile(r"typedef\s+[\w\s\*]+\(\s*\*\s*(\w+)\s*\)")
_FIELD = re.compile(r"^(?:const\s+)?([\w ]+?)\s*(\*?)\s*(?:const\s+)?(\w+)\s*(?:\[\s*(\d+)\s*\])?$")


@cache
def declarations() -> tuple[dict[str, tuple[Field, ...]], frozenset[str], frozenset[str]]:
    """(structs by name, enum type names, function-pointer type names) of every cdef file."""
    text = "\n".join(re.sub(r"//[^\n]*", "", p.read_text()) for p in cdef_files())
    structs: dict[str, tuple[Field, ...]] = {}
    enums: set[str] = set()
    for kind, body, name in _TYPEDEF.findall(text):
        if kind == "enum":
            enums.add(name)
            continue
        fields = []
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            m = _FIELD.match(" ".join(decl.split()))
            if m is None:
                raise ValueError(f"pyruntime/cdefs: cannot read field {decl!r} of {name}")
            ctype, star, fname, count = m.groups()
            fields.append(Field(fname, ctype.strip(), bool(star), int(count) if count else 1))
        structs[name] = tuple(fields)
    return structs, frozenset(enums), frozenset(_FNPTR.findall(text))


def struct_fields(struct_type: str) -> tuple[Field, ...]:
    structs = declarations()[0]
    if struct_type not in structs:
        raise ValueError(f"unknown runtime struct {struct_type!r}")
    return structs[struct_type]


def is_struct(ctype: str) -> bool:
    return ctype in declarations()[0]


def struct_layout(struct_type: str, pointer_bytes: int) -> tuple[int, int]:
    """(size, alignment) of a runtime struct on a target with the given pointer size (natural alignment,
    as the AAPCS and the x86-64/AArch64 ABIs lay it out)."""
    return _layout(struct_type, pointer_bytes)[:2]


def field_offsets(struct_type: str, pointer_bytes: int) -> dict[str, int]:
    """Byte offset of every field of a runtime struct."""
    return dict(_layout(struct_type, pointer_bytes)[2])


def _layout(struct_type: str, pointer_bytes: int) -> tuple[int, int, list[tuple[str, int]]]:
    _, enums, fnptrs = declarations()
    offset, align, offsets = 0, 1, []
    for f in struct_fields(struct_type):
        if f.pointer or f.ctype in fnptrs or f.ctype == "size_t":
            size = a = pointer_bytes
        elif f.ctype in enums:
            size = a = 4
        elif is_struct(f.ctype):
            size, a = struct_layout(f.ctype, pointer_bytes)
        else:
            size = a = SCALARS[f.ctype]
        offset = (offset + a - 1) // a * a
        offsets.append((f.name, offset))
        offset += size * f.count
        align = max(align, a)
    return (offset + align - 1) // align * align, align, offsets
