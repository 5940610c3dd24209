#!/usr/bin/env python3
"""Seeds fuzz/seeds/<target>/ from fixtures/ and writes fuzz/json.dict.

Each seed is one option byte (see fuzz/check.rs) followed by a fixture of at most 64 KiB.
The committed corpora (fuzz/corpus/) were grown from these seeds and minimized; run this
only to start over. Usage: python3 fuzz/seed.py (from the repository root).
"""

import json
import pathlib
import re
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
OUT = ROOT / "fuzz" / "seeds"
MAX = 64 * 1024

# Option byte of `--from <provider>` (1 + index in Provider::ALL).
PROVIDER = {"acp": 1, "claude": 2, "codex": 3, "opencode": 4, "gemini": 5, "auggie": 6}


def small(paths):
    return [p for p in sorted(paths) if p.stat().st_size <= MAX]


def write(target, name, opt, data):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.{opt}").write_bytes(bytes([opt]) + data)


def chunks(data):
    """Whole lines, at most MAX bytes a chunk."""
    out, cur = [], b""
    for line in data.splitlines(keepends=True):
        if len(cur) + len(line) > MAX and cur:
            out.append(cur)
            cur = b""
        cur += line[:MAX]
    return out + ([cur] if cur else [])


def main():
    inputs = [p for d in PROVIDER for p in small((FIX / d).glob("*.input.jsonl"))]
    events = small(FIX.glob("*/*.events.jsonl"))
    for p in inputs:
        name, data = f"{p.parent.name}-{p.name}", p.read_bytes()
        forced = PROVIDER[p.parent.name]
        for opt in (0, forced, forced | 8 | 16):
            write("normalize", name, opt, data)
    for p in events:
        name, data = f"{p.parent.name}-{p.name}", p.read_bytes()
        for opt in (0, 1):
            write("scrub", name, opt, data)
        for opt in (0, 5, 14, 17):
            write("truncate", name, opt, data)
        for opt in (0, 1, 2):
            write("summarize", name, opt, data)
    for p in small((FIX / "project").glob("*.events.jsonl")):
        for opt in range(7):
            write("project", p.name, opt, p.read_bytes())
        write("project", p.name, 8 | 5, p.read_bytes())
    for p in sorted((FIX / "scrub").glob("*.jsonl")):
        for i, c in enumerate(chunks(p.read_bytes())[:4]):
            for opt in (0, 1):
                write("scrub", f"{p.stem}-{i}", opt, c)
    for p in small((FIX / "summarize").glob("*.json")):
        write("summarize", p.name, 4, p.read_bytes())
    write_dict(inputs + events)


def write_dict(paths):
    """JSON syntax, and the keys and short string values the fixtures use most."""
    words = Counter()

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                words[json.dumps(k) + ":"] += 1
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and 0 < len(v) <= 32 and re.fullmatch(r"[\w./:@-]+", v):
            words[json.dumps(v)] += 1

    for p in paths:
        for line in p.read_text(errors="replace").splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                pass
    tokens = ["{", "}", "[", "]", ",", ":", "\"\"", "null", "true", "false", "0", "-1", "1e999",
              "\\n", "\\u0000", "\\u001b[31m", "\\ud800", "\\r", "\ufeff", "\r\n", "\n"]
    lines = [f'"{esc(t)}"' for t in tokens]
    lines += [f'"{esc(w)}"' for w, _ in words.most_common(600)]
    (ROOT / "fuzz" / "json.dict").write_text("# JSON syntax, and keys and values from fixtures/ (fuzz/seed.py)\n" + "\n".join(lines) + "\n")


def esc(s):
    return "".join(c if 0x20 <= ord(c) < 0x7f and c not in '"\\' else "\\x%02x" % b for c in s for b in c.encode())


if __name__ == "__main__":
    main()
