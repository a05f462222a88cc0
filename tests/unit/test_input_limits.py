"""Input files have stated size limits; YAML aliases and nesting are bounded: one line, exit 2, at once,
in bounded memory (the CLI runs under a 3 GiB address-space limit and its peak resident memory is checked:
without the limits these cases took 22.9 GB, a 688 MB string, or a RecursionError)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from biasatlas.audit.spec import AuditError, load_audit
from biasatlas.datafiles import MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES, DataFileError, load_yaml
from biasatlas.probes.contact.importer import MAX_IMPORT_BYTES, DatasetImportError, import_dataset, read_descriptors

ADDRESS_SPACE = 3 * 1024**3
#: The limit is set by the child itself, not in a preexec_fn: a preexec_fn makes subprocess fork this (large)
#: test process, and the child's peak resident memory then counts this process's pages from before its exec.
SCRIPT = (f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE})); "
          "from biasatlas.cli.entry import main; sys.argv[0] = 'biasatlas'; main()")
MEASURE = ("import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:]); _, status, usage = os.wait4(p.pid, 0); "
           "open(os.environ['PEAK_FILE'], 'w').write(str(usage.ru_maxrss)); "
           "sys.exit(os.waitstatus_to_exitcode(status))")
PEAK_RSS_KIB = 600 * 1024  #: the most resident memory a refused input may cost (pandas' import included)

AUDIT = """\
title: {title}
models:
  - model: fake:x
probes:
  contact: {{limit: 3}}
"""
#: A "billion laughs": nine lists of nine aliases to the list before (9**9 "lol" once expanded).
BOMB = "[" + ", ".join(
    ["&a [" + ", ".join(["lol"] * 9) + "]"]
    + [f"&{chr(ord('b') + i)} [" + ", ".join([f"*{chr(ord('a') + i)}"] * 9) + "]" for i in range(8)]
) + "]"


def _cli(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the CLI under the address-space limit; (its result, seconds), its peak resident memory checked.

    Through a small Python in between (MEASURE): Linux counts a process's pages from before its exec in its peak
    resident memory, so the CLI started straight from this test process (1 GB in a long unit run) would report
    this process's size. The one in between is ~10 MB when it starts the CLI and reports the CLI's own peak."""
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r") as peak:
        proc = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-c", SCRIPT, *args], stdout=out,
                              stderr=err, text=True, env={"COLUMNS": "300", "PATH": "/usr/bin:/bin",
                                                          "PEAK_FILE": peak.name})
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
        maxrss = int(Path(peak.name).read_text())
    assert maxrss < PEAK_RSS_KIB, (maxrss, args)
    return done, time.monotonic() - started


def _one_line_exit_2(out: subprocess.CompletedProcess[str], *needles: str) -> None:
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2, out.stderr[-2000:]
    assert len(lines) == 1 and all(n in lines[0] for n in needles), out.stderr[-2000:]


def _bomb_audit(tmp_path: Path) -> Path:
    path = tmp_path / "bomb.yaml"
    path.write_text(AUDIT.format(title=BOMB))
    return path


def _deep_audit(tmp_path: Path, depth: int = 50_000) -> Path:
    path = tmp_path / "deep.yaml"
    path.write_text(AUDIT.format(title="[" * depth + "]" * depth))
    return path


def test_an_alias_bomb_in_an_audit_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="aliases"):
        load_audit(_bomb_audit(tmp_path))


def test_an_audit_file_nested_50000_deep_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match=f"nested more than {MAX_YAML_DEPTH}"):
        load_audit(_deep_audit(tmp_path))


def test_an_audit_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(AUDIT.format(title="x" * (MAX_YAML_BYTES + 10)))
    with pytest.raises(AuditError, match="larger than"):
        load_audit(path)


def test_yaml_that_fits_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(AUDIT.format(title="&t t").replace("{limit: 3}", "{limit: 3, axes: [*t]}"))
    assert load_audit(path).title == "t"
    depth = MAX_YAML_DEPTH - 5
    path.write_text("a: " + "[" * depth + "]" * depth + f"\nb: [&x [1, 2], {', '.join(['*x'] * 100)}]\n")
    data = load_yaml(path)
    assert len(data["b"]) == 101 and data["b"][100] == [1, 2]


def test_data_files_have_the_same_limits(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(f"z: {BOMB}\n")
    with pytest.raises(DataFileError, match="aliases"):
        load_yaml(path)
    path.write_text("[" * 50_000 + "]" * 50_000)
    with pytest.raises(DataFileError, match="nested"):
        load_yaml(path)
    assert MAX_YAML_NODES >= 10_000


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("a: &a [*a]\n")
    with pytest.raises(DataFileError, match="aliases"):
        load_yaml(path)


@pytest.mark.parametrize("reader", ["templates", "descriptors"])
def test_an_endless_or_huge_import_file_is_refused(tmp_path: Path, reader: str) -> None:
    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(MAX_IMPORT_BYTES + 1)  # sparse: no disk used
    for path in (Path("/dev/zero"), big):
        with pytest.raises(DatasetImportError, match="larger than"):
            if reader == "templates":
                import_dataset(path)
            else:
                read_descriptors(path)


def test_the_cli_gives_one_line_exit_2_for_each_case(tmp_path: Path) -> None:
    study = str(tmp_path / "s")
    out, seconds = _cli("run", "contact", "--templates", "/dev/zero", "--plan-only", "--study", study)
    _one_line_exit_2(out, "/dev/zero", "larger than")
    assert seconds < 30
    out, seconds = _cli("audit", str(_bomb_audit(tmp_path)), "--plan-only", "--study", study)
    _one_line_exit_2(out, "aliases")
    out, seconds = _cli("audit", str(_deep_audit(tmp_path)), "--plan-only", "--study", study)
    _one_line_exit_2(out, "nested")
    assert not (tmp_path / "s").exists()


def test_the_bounded_safe_loader_for_other_user_yaml() -> None:
    import yaml

    from biasatlas.datafiles import BoundedSafeLoader

    assert yaml.load("a: [1, {b: Yes}]", Loader=BoundedSafeLoader) == {"a": [1, {"b": True}]}
    with pytest.raises(yaml.YAMLError, match="aliases"):
        yaml.load(f"x: {BOMB}", Loader=BoundedSafeLoader)
