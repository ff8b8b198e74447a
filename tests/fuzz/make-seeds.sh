#!/usr/bin/env bash
# Regenerates the seed corpora in tests/fuzz/corpus/ from real files: builds a
# few keys of the tiny config with the built monodc into a scratch cache, then
# splits each entry into its parts (key text, manifest, code object, the code
# object's AMDGPU metadata note). Usage: tests/fuzz/make-seeds.sh [BUILD_DIR]
# (default build/; needs the full build, with the compiler). Seeds over
# 100 KB are skipped. Existing seeds of the same name are replaced.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
CORPUS="$ROOT/tests/fuzz/corpus"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$BUILD/bin/monodc" matrix --cache "$WORK/gfx950" --config tiny --arch gfx950 \
  --launch allreduce,attention_query,attention_front,attention_seam --rows 1,6 --tp 2 >/dev/null
"$BUILD/bin/monodc" matrix --cache "$WORK/gfx90a" --config tiny --arch gfx90a \
  --launch allreduce --rows 2 --tp 4 >/dev/null
mkdir -p "$CORPUS"/{build_key,launch_interface,code_object,msgpack,cache_entry}
python3 - "$CORPUS" "$WORK"/gfx950/*.mco "$WORK"/gfx90a/*.mco <<'PY'
import os, re, struct, sys
corpus, entries = sys.argv[1], sys.argv[2:]
LIMIT = 100 * 1024

def put(kind, name, data):
    if len(data) > LIMIT:
        print(f"skip {kind}/{name}: {len(data)} bytes")
        return
    with open(os.path.join(corpus, kind, name), "wb") as f:
        f.write(data)

def amdgpu_note(elf):
    """The desc of the NT_AMDGPU_METADATA (32) note of the PT_NOTE segments."""
    phoff, = struct.unpack_from("<Q", elf, 32)
    phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", elf, phoff + i * phentsize)
        if p_type != 4:
            continue
        off, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 8)
        size, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 32)
        at = off
        while at + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, at)
            name = elf[at + 12: at + 12 + namesz]
            desc_at = at + 12 + ((namesz + 3) & ~3)
            if ntype == 32 and name.rstrip(b"\0") == b"AMDGPU":
                return elf[desc_at: desc_at + descsz]
            at = desc_at + ((descsz + 3) & ~3)
    return None

for path in entries:
    data = open(path, "rb").read()
    key_len, meta_len = struct.unpack_from("<II", data, 12)
    code_len, = struct.unpack_from("<Q", data, 24)
    key = data[64: 64 + key_len]
    meta = data[64 + key_len: 64 + key_len + meta_len]
    code = data[64 + key_len + meta_len:]
    assert len(code) == code_len
    fields = dict(re.findall(r"(\w+)=(\S*)", key.decode()))
    name = f"{fields['launch']}.{fields['arch']}.r{fields['rows']}.tp{fields['tp']}"
    put("build_key", name + ".key", key)
    put("launch_interface", name + ".manifest", meta)
    put("code_object", name + ".co", code)
    note = amdgpu_note(code)
    if note:
        put("msgpack", name + ".note", note)
    put("cache_entry", name + ".mco", data)
PY
du -sh "$CORPUS"/*
