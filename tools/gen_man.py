#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Man pages of the loom command, made at build time from its own --help.

    gen_man.py LOOM_CLI OUTDIR VERSION

Writes loom.1 and loom-COMMAND.1 for every command `loom --help` lists, so
the pages never drift from the tool. The environment section is the one
every page shares; README.md has the full table.
"""
import os
import re
import subprocess
import sys

ENVIRONMENT = [
    ("LOOM_PLUGIN_PATH", "colon-separated folders searched for packs before the defaults"),
    ("LOOM_PLUGINS_SELECT, LOOM_PLUGINS_DISABLE", "globs over pack file names (without .so) to load or skip"),
    ("LOOM_BACKENDS", "backend order, with per-op rules: cuda,onednn,cpu;vision.nms=cpu"),
    ("LOOM_STRICT", "1: fallbacks, compact copies of strided inputs and configuration mistakes are errors"),
    ("LOOM_VERBOSE", "1..3: loading, one line per dispatch, timings"),
    ("LOOM_NUM_THREADS", "threads of the core's pool (default: physical cores)"),
    ("LOOM_CPU_MAX_ISA", "scalar|sse4|avx2|avx512|amx|native: the widest vector code used"),
    ("LOOM_MAX_ALLOC", "the largest single allocation (default: half the RAM)"),
    ("LOOM_ALLOC_CACHE", "bytes of freed host blocks kept for reuse; 0 turns the cache off"),
    ("LOOM_PROBE, LOOM_PROBE_TIMEOUT", "vet new packs in a child process first"),
    ("LOOM_CUDA_GATE", "0: open CUDA packs even without a CUDA driver or device (default 1: skip them)"),
    ("LOOM_DEMO_PATH", "more folders of demo programs for loom demo"),
    ("LOOM_PROGRESS", "1 or 0: force the progress line on or off (default: on a terminal)"),
]


def esc(line):
    """A line of text as troff: backslashes and leading dots/quotes escaped."""
    line = line.replace("\\", "\\e").replace("-", "\\-")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def help_of(cli, *args):
    r = subprocess.run([cli, *args, "--help"], capture_output=True, text=True, timeout=60)
    return r.stdout


def page(name, section_title, summary, synopsis, body_lines, version, see_also):
    out = [f'.TH {name.upper()} 1 "" "loom {version}" "{section_title}"',
           ".SH NAME", esc(f"{name} - {summary}"), ".SH SYNOPSIS", ".nf"]
    out += [esc(s) for s in synopsis] + [".fi", ".SH DESCRIPTION", ".nf"]
    out += [esc(s) for s in body_lines] + [".fi", ".SH ENVIRONMENT"]
    for var, what in ENVIRONMENT:
        out += [".TP", f"\\fB{esc(var)}\\fR", esc(what)]
    out += [".SH EXIT STATUS", "0 success, 1 a loom call failed, 2 usage error.",
            ".SH SEE ALSO", ", ".join(f"\\fB{s}\\fR(1)" for s in see_also)]
    return "\n".join(out) + "\n"


def main():
    cli, outdir, version = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    top = help_of(cli)
    commands = re.findall(r"^  ([\w-]+)\s+(.*)$", top.split("commands:", 1)[1].split("\n\n", 1)[0], re.M)
    names = [f"loom-{c}" for c, _ in commands]
    with open(os.path.join(outdir, "loom.1"), "w") as f:
        f.write(page("loom", "loom manual", "run operator packs from the command line",
                     ["loom COMMAND [ARGS]"], top.rstrip("\n").split("\n"), version, names))
    for cmd, summary in commands:
        text = help_of(cli, cmd).rstrip("\n").split("\n")
        # the usage lines open the help: "usage: ..." and its continuations
        # (indented past the description's two spaces)
        n = 0
        while n < len(text) and (text[n].startswith("usage:") or (n > 0 and text[n].startswith("      "))):
            n += 1
        synopsis = [l.replace("usage: ", "", 1).strip() for l in text[:n]]
        text = [l[2:] if l.startswith("  ") else l for l in text[n:]]
        with open(os.path.join(outdir, f"loom-{cmd}.1"), "w") as f:
            f.write(page(f"loom-{cmd}", "loom manual", summary, synopsis or [f"loom {cmd}"], text, version,
                         ["loom"] + [n for n in names if n != f"loom-{cmd}"]))


if __name__ == "__main__":
    main()
