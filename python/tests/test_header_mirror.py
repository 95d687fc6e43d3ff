# test_header_mirror.py -- the ctypes mirror of include/numrpc.h (python/numrpc/_lib.py, _errors.py)
# agrees with the header: a C program compiled now prints its sizes, offsets and enum values.
import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import numrpc
from numrpc import _call, _each, _errors, _lib

HEADER = Path(__file__).resolve().parents[2] / "include" / "numrpc.h"

# Each ctypes mirror and the C type it stands for.
STRUCTS = {"numrpc_config": _lib.Config, "numrpc_call_info": _lib.CallInfoC,
           "numrpc_param_info": _lib.ParamInfo, "numrpc_param_shape": _lib.ParamShape,
           "numrpc_arg": _lib.Arg, "numrpc_each": _each.EachC}
UNIONS = {"numrpc_arg": ("v", _lib.ArgValue)}  # the anonymous union of numrpc_arg, as its member v


def header_text():
    """numrpc.h without its comments."""
    return re.sub(r"/\*.*?\*/", " ", HEADER.read_text(), flags=re.S)


def struct_fields(text, name):
    """The member names of `typedef struct name {...} name;` in the header, in order
    (a nested union counts as its member name)."""
    m = re.search(rf"typedef struct {name} \{{(.*?)\}} {name};", text, flags=re.S)
    assert m, f"no typedef struct {name} in {HEADER}"
    body = re.sub(r"union\s*\{.*?\}", "union", m.group(1), flags=re.S)
    return [re.sub(r"\[.*\]", "", decl).split()[-1].lstrip("*") for decl in body.split(";") if decl.strip()]


def enum_names(text, name):
    """The constants of `typedef enum name {...} name;`, in order."""
    m = re.search(rf"typedef enum {name} \{{(.*?)\}} {name};", text, flags=re.S)
    assert m, f"no typedef enum {name} in {HEADER}"
    return [entry.split("=")[0].strip() for entry in m.group(1).split(",") if entry.strip()]


@pytest.fixture(scope="module")
def header(tmp_path_factory):
    """What the real header says, from a C program: {("size", type): n, ("offset", type, field): n,
    ("fsize", type, field): n, ("value", NAME): n} and the error list's names."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    text = header_text()
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "numrpc.h"', "int main(void) {"]

    def member(ctype, field):
        lines.append(f'printf("offset {ctype} {field} %zu\\n", offsetof({ctype}, {field}));')
        lines.append(f'printf("fsize {ctype} {field} %zu\\n", sizeof((({ctype} *)0)->{field}));')

    for ctype, mirror in STRUCTS.items():
        lines.append(f'printf("size {ctype} %zu\\n", sizeof({ctype}));')
        for field in struct_fields(text, ctype):
            member(ctype, field)
    for ctype, (field, union) in UNIONS.items():
        lines.append(f'printf("size {ctype}.{field} %zu\\n", sizeof((({ctype} *)0)->{field}));')
        for name, _ in union._fields_:
            lines.append(f'printf("offset {ctype}.{field} {name} %zu\\n", '
                         f'offsetof({ctype}, {field}.{name}) - offsetof({ctype}, {field}));')
            lines.append(f'printf("fsize {ctype}.{field} {name} %zu\\n", sizeof((({ctype} *)0)->{field}.{name}));')
    for enum in ("numrpc_type", "numrpc_mode"):
        lines.append(f'printf("size {enum} %zu\\n", sizeof({enum}));')
        for name in enum_names(text, enum):
            lines.append(f'printf("value {name} %d\\n", (int){name});')
    lines.append('printf("value NUMRPC_MAX_RANK %d\\n", NUMRPC_MAX_RANK);')
    lines.append('#define ERROR_(name, value, msg) printf("error NUMRPC_" #name " %d\\n", (int)NUMRPC_##name);')
    lines += ["NUMRPC_ERROR_LIST(ERROR_)", "return 0; }"]

    work = tmp_path_factory.mktemp("mirror")
    (work / "mirror.c").write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=gnu11", "-Wall", "-Werror", "-I", str(HEADER.parent), "-o", str(work / "mirror"),
                    str(work / "mirror.c")], check=True)
    out = subprocess.run([str(work / "mirror")], check=True, capture_output=True, text=True).stdout
    facts, errors = {}, {}
    for line in out.splitlines():
        kind, *key, value = line.split()
        if kind == "error":
            errors[key[0]] = int(value)
        else:
            facts[(kind, *key)] = int(value)
    return {"text": text, "facts": facts, "errors": errors}


@pytest.mark.parametrize("ctype", sorted(STRUCTS))
def test_struct_fields_sizes_offsets(header, ctype):
    mirror = STRUCTS[ctype]
    c_fields = struct_fields(header["text"], ctype)
    assert [name for name, *_ in mirror._fields_] == c_fields, f"{mirror.__name__}'s fields are not {ctype}'s"
    facts = header["facts"]
    assert ctypes.sizeof(mirror) == facts[("size", ctype)], f"sizeof({ctype})"
    for name in c_fields:
        field = getattr(mirror, name)
        assert field.offset == facts[("offset", ctype, name)], f"offsetof({ctype}, {name})"
        assert field.size == facts[("fsize", ctype, name)], f"sizeof {ctype}.{name}"


def test_arg_union(header):
    facts = header["facts"]
    union = _lib.ArgValue
    assert ctypes.sizeof(union) == facts[("size", "numrpc_arg.v")]
    for name, _ in union._fields_:
        field = getattr(union, name)
        assert field.offset == facts[("offset", "numrpc_arg.v", name)] == 0
        assert field.size == facts[("fsize", "numrpc_arg.v", name)], f"sizeof numrpc_arg.v.{name}"
    # The header's union has no member the mirror lacks: every member named in the C program came
    # from the mirror, so compare the header's list too.
    body = re.search(r"typedef struct numrpc_arg \{.*?union\s*\{(.*?)\}", header["text"], flags=re.S).group(1)
    assert [d.split()[-1].lstrip("*") for d in body.split(";") if d.strip()] == [n for n, _ in union._fields_]


@pytest.mark.parametrize("enum, prefix", [("numrpc_type", "NUMRPC_T_"), ("numrpc_mode", "NUMRPC_MODE_")])
def test_enums(header, enum, prefix):
    names = enum_names(header["text"], enum)
    assert names and all(n.startswith(prefix) for n in names)
    assert header["facts"][("size", enum)] == ctypes.sizeof(ctypes.c_int)  # passed as c_int
    mirror_prefix = prefix[len("NUMRPC_"):]  # T_, MODE_
    mirrored = {n for n in vars(_lib) if n.startswith(mirror_prefix) and n.isupper() and not n.endswith("_NAMES")}
    assert mirrored == {n[len("NUMRPC_"):] for n in names}, f"_lib's {mirror_prefix}* are not {enum}'s"
    for name in names:
        assert getattr(_lib, name[len("NUMRPC_"):]) == header["facts"][("value", name)], name
    names_table = _lib.TYPE_NAMES if enum == "numrpc_type" else _lib.MODE_NAMES  # every value has a name
    assert set(names_table) == {header["facts"][("value", n)] for n in names}


def test_max_rank(header):
    assert _lib.MAX_RANK == header["facts"][("value", "NUMRPC_MAX_RANK")]


def test_error_codes(header):
    errors = header["errors"]
    assert errors["NUMRPC_OK"] == 0 and len(errors) > 10
    # The codes _errors.py (and _call.py) spell out.
    for name in ("EINVAL", "ENOENT", "ECONNECT", "ECANCELLED", "ETIMEDOUT", "ECRASHED", "EIO"):
        assert getattr(_errors, name) == errors["NUMRPC_" + name], name
    assert _call.EINTERNAL == errors["NUMRPC_EINTERNAL"]
    # Each class stands for the code its docstring names.
    for code, cls in _errors._CLASSES.items():
        named = re.match(r"(NUMRPC_E[A-Z]+)", cls.__doc__).group(1)
        assert errors[named] == code, f"{cls.__name__} is {named}"
    # The loaded library (the bundled one, in the installed package) knows the header's list.
    for name, code in errors.items():
        assert _lib.lib.numrpc_errname(code).decode() == name
        error = numrpc.Error(code) if code else None
        if error is not None:
            assert error.name == name and error.code == code
