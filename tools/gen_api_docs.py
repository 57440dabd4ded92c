#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The API reference, made at build time from the header comments.

    gen_api_docs.py OUT.md abi/loom/loom.h abi/loom/plugin.h

The headers are the reference: each comment states a contract. This turns
them into one Markdown page: per header its opening comment, then per
section (a `/* ---- name */` rule) every comment with the declarations that
follow it, in header order. Nothing is written by hand, so it cannot drift.
"""
import re
import sys

RULE = re.compile(r"^/\*\s*-{4,}\s*(.*?)\s*\*/$")


def comment_text(block):
    """The prose of a /* ... */ block, without the comment markers."""
    lines = []
    for raw in block.split("\n"):
        s = raw.strip()
        s = re.sub(r"^/\*+", "", s)
        s = re.sub(r"\*+/$", "", s)
        s = re.sub(r"^\*\*? ?", "", s)
        lines.append(s.rstrip())
    return "\n".join(lines).strip()


def items(src):
    """(kind, text) in order: 'section', 'doc', 'code'."""
    out = []
    lines = src.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        s = line.strip()
        m = RULE.match(s) if line.startswith("/*") else None
        if m:
            out.append(("section", m.group(1) or "general"))
            k += 1
            continue
        if "SPDX-License-Identifier" in s:
            k += 1
            continue
        if s.startswith("/*"):
            block = [line]
            while "*/" not in lines[k] and k + 1 < len(lines):
                k += 1
                block.append(lines[k])
            out.append(("doc", comment_text("\n".join(block))))
            k += 1
            continue
        if s == "" or s.startswith(("#ifndef LOOM_", "#define LOOM_LOOM_H", "#define LOOM_PLUGIN_H", "#endif",
                                    "#ifdef __cplusplus", "extern \"C\"", "}", "#include")):
            k += 1
            continue
        # a declaration runs to a blank line or a column-0 comment, but a
        # struct or enum body runs to its closing brace whatever it holds
        def braces(l):
            t = l.strip()
            if t.startswith("#") or t.startswith('extern "C"') or t.startswith("LOOM_EXTERN_C"):
                return 0
            t = re.sub(r"/\*.*?\*/", "", t)
            return t.count("{") - t.count("}")
        code = [line]
        depth = braces(line)
        while k + 1 < len(lines):
            nxt = lines[k + 1]
            if depth <= 0 and (nxt.strip() == "" or nxt.startswith("/*")):
                break
            k += 1
            code.append(nxt)
            depth += braces(nxt)
        out.append(("code", "\n".join(code)))
        k += 1
    return out


def render(path, src):
    md = [f"## `{path}`", ""]
    first = True
    for kind, text in items(src):
        if kind == "section":
            md += [f"### {text}", ""]
        elif kind == "doc":
            if first:
                md += [text, ""]
                first = False
            else:
                md += [text, ""]
        else:
            md += ["```c", text, "```", ""]
    return md


def main():
    out, headers = sys.argv[1], sys.argv[2:]
    md = ["# loom API reference", "",
          "Generated from the comments of the public headers (tools/gen_api_docs.py);",
          "`docs/abi.md` has the ABI's history and rules.", ""]
    for h in headers:
        with open(h) as f:
            md += render("loom/" + h.split("/")[-1], f.read())
    with open(out, "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
