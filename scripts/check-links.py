#!/usr/bin/env python3
"""Check the relative links of cordon's Markdown documentation.

usage: check-links.py [TOP]   (TOP: the source tree, default: this script's ..)

Every link [text](target) in README.md, SECURITY.md, NEWS.md and docs/*.md
whose target is not a URL must name a file or directory that exists,
relative to the page; a #anchor must be a heading of the page it names
(GitHub's anchors: the heading's text in lower case, punctuation dropped,
spaces as hyphens, a repeated one with -1, -2, ...). Links inside code
(fenced blocks, `spans`) are not links. Prints one line per broken link,
FILE:LINE: TARGET: why, and exits 1 if there is any, else 0.
"""
import os
import re
import sys

TOP = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def lines_outside_code(path):
    """(line number, text) of each line outside fenced blocks, inline code blanked."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is None:
                yield n, line.rstrip("\n")


def blank_code_spans(line):
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, out = {}, set()
        for _, line in lines_outside_code(path):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            if s in seen:
                seen[s] += 1
                s = "%s-%d" % (s, seen[s])
            else:
                seen[s] = 0
            out.add(s)
        _anchors[path] = out
    return _anchors[path]


def check(page):
    bad = []
    rel = os.path.relpath(page, TOP)
    for n, line in lines_outside_code(page):
        line = blank_code_spans(line)
        targets = [m.group(1) for m in LINK.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I):  # http:, https:, mailto:
                continue
            path, _, anchor = t.partition("#")
            dest = page if path == "" else os.path.normpath(os.path.join(os.path.dirname(page), path))
            if not os.path.exists(dest):
                bad.append("%s:%d: %s: no such file or directory" % (rel, n, t))
                continue
            if anchor:
                if not dest.endswith(".md") or os.path.isdir(dest):
                    bad.append("%s:%d: %s: an anchor into a page that is not Markdown" % (rel, n, t))
                elif anchor.lower() not in anchors(dest):
                    bad.append("%s:%d: %s: no heading with that anchor in %s" %
                               (rel, n, t, os.path.relpath(dest, TOP)))
    return bad


def main():
    pages = [os.path.join(TOP, p) for p in ("README.md", "SECURITY.md", "NEWS.md") if os.path.exists(os.path.join(TOP, p))]
    docs = os.path.join(TOP, "docs")
    pages += sorted(os.path.join(docs, p) for p in os.listdir(docs) if p.endswith(".md"))
    bad = []
    for p in pages:
        bad += check(p)
    for b in bad:
        print(b)
    print("%d pages, %d broken links" % (len(pages), len(bad)), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
