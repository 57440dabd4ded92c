#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Small GLUE files in each dataset's exact distribution format, and the
rows torchtext 0.18 yields from them (tests/data/text/glue).

The files sit in torchtext's layout under tests/data/text/glue/root
(cola_public/raw/*.tsv, SST-2/*.tsv, msr_paraphrase_*.txt,
quora_duplicate_questions.tsv, stsbenchmark/sts-*.csv,
multinli_1.0_*.txt, QNLI/, RTE/, WNLI/). They carry each format's traps:
MRPC's byte order mark, QQP's quoted multi-line question and missing
fields, MNLI's 15 columns and its "-" gold labels, STS-B's extra source
columns and no header, CoLA's literal quotes and a short row, SST-2's
padded sentences, CRLF line ends.

The expected rows are what torchtext's pipeline gives: the file opened as
UTF-8 text, the first line skipped where torchtext skips it, Python's
csv.reader with delimiter '\\t' (and csv.QUOTE_NONE where torchtext sets
it), then torchtext's filter and map of each dataset (restated below from
torchtext/datasets/*.py). Standard library and numpy only, so it runs in
any venv: `tools/dev goldens` runs it in .venv-text-enc.

The same files are also packed, under tests/data/text/glue/zips, in the
zips torchtext downloads, each in its archive's layout (cola_public_1.1.zip
with cola_public/raw/ and tokenized/, SST-2.zip, multinli_1.0.zip with
its .jsonl files and __MACOSX entries, QNLIv2.zip, RTE.zip, WNLI.zip; MRPC
and QQP are plain files), and STS-B's in Stsbenchmark.tar.gz. The members
are deflated with a fixed date, so the archives come out byte for byte the
same on every run.

Written per dataset and split, under tests/data/text/glue/expect:
  <D>_<split>_label.npy (i64), _score.npy (f64), _idx.npy (i64),
  _text1.npy (u8) + _text1_offsets.npy (i64), _text2 likewise.
"""
import csv
import gzip
import io
import os
import tarfile
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "text", "glue")

FILES = {
    # dataset: {split: (relative path, skip_lines, quote_none)}
    "CoLA": {s: ("cola_public/raw/" + f, 1, True) for s, f in
             [("train", "in_domain_train.tsv"), ("dev", "in_domain_dev.tsv"), ("test", "out_of_domain_dev.tsv")]},
    "SST2": {s: ("SST-2/%s.tsv" % s, 1, False) for s in ("train", "dev", "test")},
    "MRPC": {s: ("msr_paraphrase_%s.txt" % s, 1, True) for s in ("train", "test")},
    "QQP": {"train": ("quora_duplicate_questions.tsv", 1, False)},
    "STSB": {s: ("stsbenchmark/sts-%s.csv" % s, 0, True) for s in ("train", "dev", "test")},
    "MNLI": {s: ("multinli_1.0_%s.txt" % s, 1, True) for s in ("train", "dev_matched", "dev_mismatched")},
    "QNLI": {s: ("QNLI/%s.tsv" % s, 1, True) for s in ("train", "dev", "test")},
    "RTE": {s: ("RTE/%s.tsv" % s, 1, True) for s in ("train", "dev", "test")},
    "WNLI": {s: ("WNLI/%s.tsv" % s, 1, False) for s in ("train", "dev", "test")},
}

MNLI_HEAD = ("gold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\tsentence2_parse\t"
             "sentence1\tsentence2\tpromptID\tpairID\tgenre\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\n")


def mnli_row(label, s1, s2, n):
    return "\t".join([label, "( %s )" % s1, "( %s )" % s2, "(ROOT)", "(ROOT)", s1, s2, str(100 + n),
                      "%de" % n, "fiction", label, label, "", "", ""]) + "\n"


def contents():
    c = {}
    c[("CoLA", "train")] = ("gj04\t1\t\tOur friends won't buy this analysis, let alone the next one we propose.\n"
                            "gj04\t0\t*\tThey drank the pub.\n"
                            "clc95\t1\t\tThe \"quoted\" word stays as it is.\n"
                            "short\t1\tonly three columns\n"
                            "r-67\t0\t*\tThe more you eat, the less you want.\n")
    c[("CoLA", "dev")] = "gj04\t1\t\tThe sailors rode the breeze clear of the rocks.\n"
    c[("CoLA", "test")] = "clc95\t1\t\tSomebody just left - guess who.\nclc95\t0\t*\tHe is not taller than me.\n"
    c[("SST2", "train")] = ("sentence\tlabel\nhide new secretions from the parental units \t0\n"
                            "contains no wit , only labored gags \t0\n"
                            "\"a quoted\tsentence with a tab\"\t1\n"
                            "  that loves its characters  \t1\n")
    c[("SST2", "dev")] = "sentence\tlabel\nit 's a charming and often affecting journey . \t1\n"
    c[("SST2", "test")] = "index\tsentence\n0\tuneasy mishmash of styles and genres .\n1\t this film 's relationship  \n"
    c[("MRPC", "train")] = ("\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
                            "1\t702876\t702977\tAmrozi accused his brother , whom he called \" the witness \" , of "
                            "deliberately distorting his evidence .\tReferring to him as only \" the witness \" , "
                            "Amrozi accused his brother of deliberately distorting his evidence .\r\n"
                            "0\t2108705\t2108831\tYucaipa owned Dominick 's before selling the chain to Safeway in "
                            "1998 for $ 2.5 billion .\tYucaipa bought Dominick 's in 1995 for $ 693 million .\r\n")
    c[("MRPC", "test")] = ("\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
                           "1\t1089874\t1089925\tPCCW 's chief operating officer , Mike Butcher , will report to "
                           "him .\tCurrent Chief Operating Officer Mike Butcher will report to Mr So .\r\n")
    c[("QQP", "train")] = ("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                           "0\t1\t2\tWhat is the step by step guide to invest in share market in india?\t"
                           "What is the step by step guide to invest in share market?\t0\n"
                           "1\t3\t4\t\"What is the story of \"\"Kohinoor\"\" (Koh-i-Noor) Diamond?\"\t"
                           "What would happen if the Indian government stole the Kohinoor diamond back?\t0\n"
                           "2\t5\t6\t\"How do I read\nthis question on two lines?\"\tHow can I read it?\t1\n"
                           "3\t7\t8\tWhat is a question without its pair?\t\t0\n")
    c[("STSB", "train")] = ("main-captions\tMSRvid\t2012test\t0001\t5.000\tA plane is taking off.\t"
                            "An air plane is taking off.\n"
                            "main-captions\tMSRvid\t2012test\t0004\t3.800\tA man is playing a large flute.\t"
                            "A man is playing a flute.\n"
                            "main-forums\tdeft-forum\t2014\t0005\t0.800\tIt's \"fine\".\tIt is not.\t"
                            "extra source\tcolumns\n")
    c[("STSB", "dev")] = "main-captions\tMSRvid\t2012test\t0000\t5.000\tA man with a hard hat is dancing.\tA man wearing a hard hat is dancing.\n"
    c[("STSB", "test")] = "main-captions\tMSRvid\t2012test\t0024\t2.500\tA girl is styling her hair.\tA girl is brushing her hair.\n"
    c[("MNLI", "train")] = (MNLI_HEAD + mnli_row("neutral", "Conceptually cream skimming has two basic dimensions.",
                                                 "Product and geography are what make cream skimming work.", 1)
                            + mnli_row("-", "A label nobody agreed on.", "It is filtered.", 2)
                            + mnli_row("entailment", "you know during the season", "You lose the things.", 3)
                            + mnli_row("contradiction", "One of our number will carry out your instructions.",
                                       "A member of my team will execute your orders.", 4))
    c[("MNLI", "dev_matched")] = MNLI_HEAD + mnli_row("neutral", "The new rights are nice enough",
                                                      "Everyone really likes the newest benefits", 5)
    c[("MNLI", "dev_mismatched")] = MNLI_HEAD + mnli_row("contradiction", "Your contribution helped.",
                                                         "Your contribution did not help.", 6)
    c[("QNLI", "train")] = ("index\tquestion\tsentence\tlabel\n0\tWhen did the third Digimon series begin?\t"
                            "Unlike the two seasons before it, the series was darker.\tnot_entailment\n"
                            "1\tWhich missile batteries often have individual launchers?\t"
                            "When MANPADS is operated by specialists, batteries may have several launchers.\t"
                            "entailment\n")
    c[("QNLI", "dev")] = "index\tquestion\tsentence\tlabel\n0\tWhat came into force after the new constitution?\tThe Constitution came into force.\tentailment\n"
    c[("QNLI", "test")] = "index\tquestion\tsentence\n0\tWhat organization is devoted to Jihad?\tThe organization is ...\n"
    c[("RTE", "train")] = ("index\tsentence1\tsentence2\tlabel\n0\tNo Weapons of Mass Destruction Found in Iraq Yet.\t"
                           "Weapons of Mass Destruction Found in Iraq.\tnot_entailment\n"
                           "1\tA place of sorrow.\tA place of grief.\tentailment\n")
    c[("RTE", "dev")] = "index\tsentence1\tsentence2\tlabel\n0\tDana Reeve died.\tChristopher Reeve had an accident.\tnot_entailment\n"
    c[("RTE", "test")] = "index\tsentence1\tsentence2\n0\tMann said the \"crisis\" was real.\tThe crisis is real.\n"
    c[("WNLI", "train")] = ("index\tsentence1\tsentence2\tlabel\n0\tI stuck a pin through a carrot.\t"
                            "The carrot has a hole.\t1\n1\t\"John couldn't see the stage\twith Billy in front\"\t"
                            "John is so short.\t0\n")
    c[("WNLI", "dev")] = "index\tsentence1\tsentence2\tlabel\n0\tThe drain is clogged with hair.\tThe hair has to be removed.\t1\n"
    c[("WNLI", "test")] = "index\tsentence1\tsentence2\n0\tMaude and Dora had seen the trains.\tThe trains were seen.\n"
    return c


def torchtext_rows(dataset, split, text):
    """What torchtext's datapipe yields from the file `text`."""
    _, skip, quote_none = FILES[dataset][split]
    f = io.StringIO(text, newline=None)          # text mode: universal newlines
    for _ in range(skip):
        next(f)
    kw = {"delimiter": "\t"}
    if quote_none:
        kw["quoting"] = csv.QUOTE_NONE
    test = split == "test"
    for x in csv.reader(f, **kw):
        if dataset == "CoLA":
            if len(x) != 4:
                continue
            yield (x[0], int(x[1]), x[3])
        elif dataset == "SST2":
            yield (x[1].strip(),) if test else (x[0].strip(), int(x[1]))
        elif dataset == "MRPC":
            yield (int(x[0]), x[3], x[4])
        elif dataset == "QQP":
            yield (int(x[-1]), x[3], x[4])
        elif dataset == "STSB":
            yield (int(x[3]), float(x[4]), x[5], x[6])
        elif dataset == "MNLI":
            m = {"entailment": 0, "neutral": 1, "contradiction": 2}
            if x[0] not in m:
                continue
            yield (m[x[0]], x[5], x[6])
        elif dataset in ("QNLI", "RTE"):
            m = {"entailment": 0, "not_entailment": 1}
            yield (x[1], x[2]) if test else (m[x[3]], x[1], x[2])
        elif dataset == "WNLI":
            yield (x[1], x[2]) if test else (int(x[3]), x[1], x[2])


def columns(dataset, split, rows):
    """torchtext's tuples as loom's columns (plugins/text/glue/glue.h)."""
    label, score, idx, t1, t2 = [], [], [], [], []
    test = split == "test"
    for r in rows:
        if dataset == "CoLA":
            t2.append(r[0]); label.append(r[1]); t1.append(r[2])
        elif dataset == "SST2":
            t1.append(r[0])
            if not test:
                label.append(r[1])
        elif dataset == "STSB":
            idx.append(r[0]); score.append(r[1]); t1.append(r[2]); t2.append(r[3])
        elif len(r) == 2:
            t1.append(r[0]); t2.append(r[1])
        else:
            label.append(r[0]); t1.append(r[1]); t2.append(r[2])
    return label, score, idx, t1, t2


# torchtext's zip per dataset, its members' folder, and the other members
# of the real archive (name: text) that the split filter has to pass over.
ZIPS = {
    "CoLA": ("cola_public_1.1.zip", "cola_public/", {
        "cola_public/README": "CoLA, the raw and tokenized files\n",
        "cola_public/tokenized/in_domain_train.tsv": "gj04\t1\t\tnot this one .\n",
        "cola_public/tokenized/in_domain_dev.tsv": "gj04\t1\t\tnot this one .\n",
        "cola_public/tokenized/out_of_domain_dev.tsv": "gj04\t1\t\tnot this one .\n"}),
    "SST2": ("SST-2.zip", "SST-2/", {"SST-2/original/README.txt": "the original SST files\n"}),
    "MNLI": ("multinli_1.0.zip", "multinli_1.0/", {
        "multinli_1.0/README.txt": "MultiNLI 1.0\n",
        "multinli_1.0/multinli_1.0_train.jsonl": "{}\n",
        "multinli_1.0/multinli_1.0_dev_matched.jsonl": "{}\n",
        "multinli_1.0/multinli_1.0_dev_mismatched.jsonl": "{}\n",
        "__MACOSX/multinli_1.0/._multinli_1.0_train.txt": "\x00\x05\x16\x07 Mac OS X        \n",
        "__MACOSX/multinli_1.0/._multinli_1.0_dev_matched.txt": "\x00\x05\x16\x07 Mac OS X        \n",
        "__MACOSX/multinli_1.0/._multinli_1.0_dev_mismatched.txt": "\x00\x05\x16\x07 Mac OS X        \n"}),
    "QNLI": ("QNLIv2.zip", "QNLI/", {}),
    "RTE": ("RTE.zip", "RTE/", {}),
    "WNLI": ("WNLI.zip", "WNLI/", {}),
}


def write_zips(texts, out):
    """Each ZIPS archive: folder entries, the split files, the other members."""
    os.makedirs(out, exist_ok=True)
    for dataset, (name, top, extra) in ZIPS.items():
        members = {}
        for split, (rel, _, _) in FILES[dataset].items():
            members[top + rel if not rel.startswith(top) else rel] = texts[(dataset, split)]
        members.update(extra)
        dirs = sorted({n[:i + 1] for n in members for i, c in enumerate(n) if c == "/"})
        with zipfile.ZipFile(os.path.join(out, name), "w") as z:
            for d in dirs:
                if d.startswith("__MACOSX/"):
                    continue
                info = zipfile.ZipInfo(d, date_time=(2019, 4, 1, 0, 0, 0))
                info.external_attr = (0o40755 << 16) | 0x10
                z.writestr(info, b"")
            macos = []
            for n in sorted(members):
                if n.startswith("__MACOSX/"):
                    macos.append(n)
                    continue
                info = zipfile.ZipInfo(n, date_time=(2019, 4, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o100644 << 16
                z.writestr(info, members[n].encode("utf-8"))
            for n in macos:   # at the end, as in the real archive
                info = zipfile.ZipInfo(n, date_time=(2019, 4, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o100644 << 16
                z.writestr(info, members[n].encode("utf-8"))


# STS-B comes as a gzip'd tar (torchtext's _PATH), with a README beside the
# split files, as the real Stsbenchmark.tar.gz has.
TARBALLS = {
    "STSB": ("Stsbenchmark.tar.gz", {"stsbenchmark/readme.txt": "STS Benchmark\n",
                                      "stsbenchmark/LICENSE.txt": "see the STS wiki\n"}),
}


def write_tarballs(texts, out):
    """Each TARBALLS archive, byte for byte the same on every run (fixed
    mtimes and owners, gzip without a name or time)."""
    os.makedirs(out, exist_ok=True)
    for dataset, (name, extra) in TARBALLS.items():
        members = {rel: texts[(dataset, split)] for split, (rel, _, _) in FILES[dataset].items()}
        members.update(extra)
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as t:
            folder = tarfile.TarInfo("stsbenchmark")
            folder.type, folder.mode, folder.mtime = tarfile.DIRTYPE, 0o755, 1554076800
            t.addfile(folder)
            for n in sorted(members):
                data = members[n].encode("utf-8")
                info = tarfile.TarInfo(n)
                info.size, info.mode, info.mtime = len(data), 0o644, 1554076800
                t.addfile(info, io.BytesIO(data))
        with open(os.path.join(out, name), "wb") as f:
            with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
                g.write(raw.getvalue())


def jagged(strings):
    data = b"".join(s.encode("utf-8") for s in strings)
    offs = np.zeros(len(strings) + 1, np.int64)
    for i, s in enumerate(strings):
        offs[i + 1] = offs[i] + len(s.encode("utf-8"))
    return np.frombuffer(data, np.uint8).copy(), offs


def main():
    root = os.path.join(OUT, "root")
    expect = os.path.join(OUT, "expect")
    os.makedirs(expect, exist_ok=True)
    texts = contents()
    write_zips(texts, os.path.join(OUT, "zips"))
    write_tarballs(texts, os.path.join(OUT, "zips"))
    for (dataset, split), text in texts.items():
        rel = FILES[dataset][split][0]
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(torchtext_rows(dataset, split, f.read()))
        label, score, idx, t1, t2 = columns(dataset, split, rows)
        base = os.path.join(expect, "%s_%s_" % (dataset, split))
        np.save(base + "label.npy", np.array(label, np.int64))
        np.save(base + "score.npy", np.array(score, np.float64))
        np.save(base + "idx.npy", np.array(idx, np.int64))
        for name, col in (("text1", t1), ("text2", t2)):
            v, o = jagged(col)
            np.save(base + name + ".npy", v)
            np.save(base + name + "_offsets.npy", o)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
