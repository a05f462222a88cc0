"""Refresh a pack's reading of its descriptor forms (``forms_read.tsv``) and list what does not hold.

    python scripts/form_reading.py fr            # rewrite the file: rows as the pack renders now,
                                                 # the reading kept where a row's phrases did not change
    python scripts/form_reading.py fr --check    # only list the problems (exit 1 if any)
"""

from __future__ import annotations

import argparse
import sys

from biasatlas.languages import packs_root
from biasatlas.pack_review.form_reading import FILE, MMHB_PACKS, problems, read_file, refreshed, write_file

HEADER = {
    "what": "every descriptor group the contact plan asks in this language, read in its role (the noun phrases "
            "its forms make with each slot noun); means = the phrases read back in English",
    "verdicts": "natural (right group, idiomatic) / awkward (right group, understood, not idiomatic) / fixed "
                "(forms.yaml replaces MMHB's form; the new phrases read again)",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("codes", nargs="+", choices=MMHB_PACKS)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    bad = 0
    for code in args.codes:
        path = packs_root() / code / FILE
        old = read_file(path) if path.is_file() else None
        if not args.check:
            header = dict(old.header) if old else {"language": code, "read_by": "(who read it, and when)",
                                                   **HEADER}
            write_file(path, refreshed(code, old), header)
        found = problems(code, read_file(path))
        bad += len(found)
        for line in found:
            print(line)
        print(f"{code}: {len(found)} problems", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
