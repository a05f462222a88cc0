"""What the leakage summary tells a reader: dropped fits with their warnings, and the notes on the measure,
the monolingual control and the non-shared groups complete cases leave out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes.leakage import model as model_module
from biasatlas.probes.leakage.analysis import Analysis
from biasatlas.probes.leakage.data import group_ids, trait_ids
from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.model import correct_per_variant, fit_leakage
from biasatlas.probes.leakage.plan import build_prompts
from biasatlas.probes.leakage.report import print_summary
from biasatlas.probes.leakage.scores import measure, variant_label
from biasatlas.probes.leakage.summary import summary_from
from biasatlas.records import GenerationSettings, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store

runner = CliRunner()


@pytest.fixture(scope="module")
def human() -> dict[str, pd.DataFrame]:
    return load_human()


def _simulated(human: dict[str, pd.DataFrame], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    trait = pd.Series(rng.normal(0, 0.05, 32), index=human["en"].index)
    score = 0.2 + 0.01 * human["zh"].fillna(0.0) + 0.004 * human["en"].fillna(0.0)
    return score.add(trait, axis=0) + rng.normal(0, 0.03, human["en"].shape)


def _cells(variant: str, groups: list[str]) -> pd.DataFrame:
    rows = [{"variant": variant, "lang": "en", "group": g, "trait": t, "score": 0.0} for g in groups
            for t in trait_ids()]
    return pd.DataFrame(rows)


def _analysis(human: dict[str, pd.DataFrame], fits: list, variant: str = "m [theme/choice]") -> Analysis:
    correct_per_variant(fits)
    return Analysis(frame=pd.DataFrame(), choices=pd.DataFrame(), cells=_cells(variant, list(group_ids())),
                    human=human, fits=fits, settings={"alpha": 0.05, "correction": "bh"})


def test_dropped_fits_are_listed_with_why_and_their_warnings_and_printed(
    human: dict[str, pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    variant = "m [theme/choice]"
    monkeypatch.setattr(model_module, "OPTIMIZERS", (("bfgs", "lbfgs", "cg"),))  # Powell would converge here
    failed = fit_leakage(0.2 + 0.01 * human["en"], human, variant=variant, target="en")  # does not converge
    monkeypatch.undo()
    sparse = _simulated(human) * np.nan
    sparse.iloc[:4, :3] = 0.5
    thin = fit_leakage(sparse, human, variant=variant, target="ru")
    good = fit_leakage(_simulated(human), human, variant=variant, target="zh")
    summary = summary_from(_analysis(human, [failed, thin, good]))
    json.dumps(summary)
    dropped = {d["target"]: d for d in summary["dropped_fits"]}
    assert set(dropped) == {"en", "ru"}
    assert dropped["en"]["stage"] == "fitted, left out" and "converge" in dropped["en"]["reason"]
    assert any("ConvergenceWarning" in w for w in dropped["en"]["warnings"])
    assert dropped["ru"]["stage"] == "not fitted" and "too little data" in dropped["ru"]["reason"]
    assert all(f["target"] == "zh" for f in summary["flows"])
    console = Console(record=True, width=250)
    print_summary(summary, console)
    text = console.export_text()
    assert "Fits left out of the flows" in text and "ConvergenceWarning" in text
    assert "left out of the flows: did not converge" in text and "too little data" in text


def test_notes_ask_for_the_monolingual_control_and_name_the_non_shared_groups_left_out(
    human: dict[str, pd.DataFrame],
) -> None:
    plain = summary_from(_analysis(human, [fit_leakage(_simulated(human), human, variant="m", target="en")], "m"))
    text = " ".join(plain["notes"])
    assert "--mono" in text and "monolingual" in text
    assert "11 of the 12 non-shared groups" in text and "--keep-nonshared" in text
    assert "VDV soldier" in text and "migrant worker" not in text
    mono = pd.DataFrame(np.random.default_rng(1).normal(0, 1, (32, 30)), index=human["en"].index,
                        columns=human["en"].columns)
    kept = fit_leakage(_simulated(human), human, variant="m", target="en", mono=mono, keep_nonshared=True)
    controlled = summary_from(_analysis(human, [kept], "m"))
    text = " ".join(controlled["notes"])
    assert "--mono" not in text and "non-shared groups" not in text


def test_masked_scores_are_named_pll_ilps_not_set(human: dict[str, pd.DataFrame]) -> None:
    masked = variant_label("masked:bert-base-multilingual-cased", "ilps", "choice")
    assert masked == "masked:bert-base-multilingual-cased [ilps-pll]"
    assert variant_label("span:google/mt5-base", "ilps", "choice") == "span:google/mt5-base [ilps]"
    assert "pseudo-log-likelihood" in measure(masked) and "not the sensitivity test (SeT)" in measure(masked)
    assert "SeT" not in measure("span:google/mt5-base [ilps]")
    fit = fit_leakage(_simulated(human), human, variant=masked, target="en")
    summary = summary_from(_analysis(human, [fit], masked))
    assert "not the sensitivity test (SeT)" in " ".join(summary["notes"])
    assert "pseudo-log-likelihood" in summary["measures"][masked]
    console = Console(record=True, width=250)
    print_summary(summary, console)
    assert "PLL-ILPS" in console.export_text()


# ---- the command -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Fake answers for two shared and two non-shared groups in English (4 × 32 cells)."""
    path = tmp_path_factory.mktemp("leak") / "s"
    store = Store(path)
    prompts = build_prompts(["en"], group_names=["woman", "man", "Texan", "VDV soldier"], orders="one")
    run_plan(prompts, FakeBackend(lambda r: r.prompt.options[int(stable_hash(r.prompt.id), 16) % 2]), store,
             GenerationSettings(mode="choice"), progress=False)
    store.close()
    return path


def _fit_json(study: Path, *args: str) -> dict:
    result = runner.invoke(app, ["leakage", "fit", "--study", str(study), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_fit_command_minimums_and_keep_nonshared(small_study: Path) -> None:
    default = _fit_json(small_study)
    (fit,) = default["fits"]
    assert fit["error"] and "too little data" in fit["error"] and fit["n_complete"] == 2 * 32
    # Complete cases: Texans were rated in en and hi only, VDV soldiers in ru only.
    assert fit["groups_left_out"] == ["Texan", "VDV soldier"] and default["dropped_fits"][0]["target"] == "en"
    lowered = _fit_json(small_study, "--min-cells", "60", "--min-cells-per-trait", "2")
    assert lowered["fits"][0]["min_cells"] == 60 and lowered["fits"][0]["error"] is None
    kept = _fit_json(small_study, "--keep-nonshared", "--min-cells", "60", "--min-cells-per-trait", "4")
    (fit,) = kept["fits"]
    assert fit["keep_nonshared"] and fit["n_obs"] == 4 * 32 and not fit["groups_left_out"]
    assert fit["error"] is None, fit["error"]  # redundant indicators (missing_zh = missing_en + missing_ru) dropped
    assert kept["settings"]["keep_nonshared"] is True
    both = runner.invoke(app, ["leakage", "fit", "--study", str(small_study), "--keep-nonshared", "--zero-fill"])
    assert both.exit_code == 2 and "exclude each other" in both.output
    text = runner.invoke(app, ["leakage", "fit", "--study", str(small_study)])
    assert text.exit_code == 0 and "--mono" in text.output and "Fits left out of the flows" in text.output


def test_the_command_default_per_trait_minimum_is_the_model_default() -> None:
    from biasatlas.cli import run_leakage
    from biasatlas.probes.leakage import model

    assert run_leakage.MIN_CELLS_PER_TRAIT == model.MIN_CELLS_PER_TRAIT


def test_the_summary_and_the_report_say_why_no_group_is_named(human: dict[str, pd.DataFrame]) -> None:
    from biasatlas.probes.leakage.groups import GROUP_NOTE

    summary = summary_from(_analysis(human, [fit_leakage(_simulated(human), human, variant="m", target="en")], "m"))
    assert GROUP_NOTE in summary["notes"]
    console = Console(record=True, width=400)
    print_summary(summary, console)
    assert "No group-disparity headline for leakage" in console.export_text()
