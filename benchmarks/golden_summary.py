"""A golden reference of the contact probe's ``summarise(store)``: refactors of the summary must leave it unchanged.

Builds (once, under ``--studies``; kept, so the stored answers and run ids stay fixed) three fake studies:

* ``multi``: an audit of 3 models × en, de, fr, zh (``--limit 42``, model 0 ``fake:m0?biased=Muslims``; the
  audit file of ``bench_many_models.py``), the contact probe's default choice mode;
* ``generate``: two models in generate mode (free text read by the rules) × en, zh;
* ``design``: every scale, 3 samples at temperature 0.7, choice and generate mode, en and de.

Then dumps ``summarise(store)`` of each as canonical JSON (keys sorted, floats as ``repr``, NaN as ``NaN``)
and writes it (``--write FILE``) or compares it with a file written before (``--check FILE``: exit 1 and the
first differing paths when they differ).

    .venv/bin/python benchmarks/golden_summary.py --write /tmp/golden.json
    .venv/bin/python benchmarks/golden_summary.py --check /tmp/golden.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_many_models import audit_file

BIN = Path(sys.executable).with_name("biasatlas")


def _run(args: list[str]) -> None:
    done = subprocess.run([str(BIN), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")


def build(root: Path) -> dict[str, Path]:
    """The three studies under ``root`` (each built only when missing)."""
    root.mkdir(parents=True, exist_ok=True)
    studies = {name: root / name for name in ("multi", "generate", "design")}
    if not studies["multi"].exists():
        yaml = root / "multi.yaml"
        audit_file(yaml, 3, ["en", "de", "fr", "zh"], 42)
        _run(["audit", str(yaml), "--study", str(studies["multi"])])
    if not studies["generate"].exists():
        for model in ("fake:g0?biased=Jews", "fake:g1"):
            _run(["run", "contact", "--study", str(studies["generate"]), "--model", model, "--mode", "generate",
                  "--lang", "en,zh", "--limit", "42", "--no-progress"])
    if not studies["design"].exists():
        for model, mode in (("fake:d0?biased=Muslims&rate=0.6", "choice"), ("fake:d1", "choice"),
                            ("fake:d0?biased=Muslims&rate=0.6", "generate")):
            _run(["run", "contact", "--study", str(studies["design"]), "--model", model, "--mode", mode,
                  "--lang", "en,de", "--scale", "all", "--samples", "3", "--temperature", "0.7", "--limit", "60",
                  "--no-progress"])
    return studies


def dump(study: Path) -> Any:
    """``summarise(store)`` of one study, through JSON (as ``summary --json`` writes it: ``default=str``)."""
    from biasatlas.probes.contact.summary import summarise
    from biasatlas.store import Store

    store = Store(study)
    return json.loads(json.dumps(summarise(store), default=str))


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False)


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where ``a`` and ``b`` differ (exactly: floats by value, types too)."""
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = [f"{path}/{k}: missing on one side" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += differences(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} rows != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")]
    same = a == b or (isinstance(a, float) and a != a and b != b)
    return [] if same else [f"{path}: {a!r} != {b!r}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", type=Path, default=Path("/tmp/golden-studies"))
    parser.add_argument("--write", type=Path)
    parser.add_argument("--check", type=Path)
    args = parser.parse_args()
    studies = build(args.studies)
    got = {name: dump(path) for name, path in studies.items()}
    if args.write:
        args.write.write_text(canonical(got) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")
    if args.check:
        want = json.loads(args.check.read_text(encoding="utf-8"))
        found = differences(want, got)
        if found:
            print(f"{len(found)} differences:", *found[:40], sep="\n")
            raise SystemExit(1)
        print(f"identical to {args.check}")


if __name__ == "__main__":
    main()
