"""What building every control shares: the trainer's manifest, float16 weights, the card's two files.

Each control's ``build`` module (used by ``scripts/build_controls.py``) trains its adapter on the loaded
embedded model into the package (``data/controls/<name>/``) and measures base + adapter and the base
model alone through the probe, into a study directory; the card (``control.json`` for code,
``README.md`` for people, written here) records what was planted and what was found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARD_JSON = "control.json"
CARD_MD = "README.md"


def training_manifest(out: Path) -> dict[str, Any]:
    """What the trainer recorded about the adapter in ``out``: settings, result, loss history."""
    from biasatlas.probes.debias.train import read_manifest

    manifest = read_manifest(out)
    if manifest is None or manifest.get("status") != "finished":
        raise FileNotFoundError(f"{out} holds no finished adapter")
    return manifest


def halve(out: Path) -> None:
    """Store the adapter's weights as float16 (5.2 MB of float32 for the top 16 layers at rank 8; the repository
    takes < 3 MB an adapter). peft casts them back to the model's float32 on loading; the card measures the
    stored weights."""
    from safetensors.torch import load_file, save_file

    weights = out / "adapter_model.safetensors"
    save_file({k: v.half().contiguous() for k, v in load_file(str(weights)).items()}, str(weights),
              metadata={"format": "pt"})


def write_card(directory: Path, card: dict[str, Any], markdown: str) -> None:
    (directory / CARD_JSON).write_text(json.dumps(card, indent=2, ensure_ascii=False, default=str) + "\n",
                                       encoding="utf-8")
    (directory / CARD_MD).write_text(markdown, encoding="utf-8")


def read_card(directory: Path) -> dict[str, Any]:
    """A control's ``control.json``."""
    return dict(json.loads((directory / CARD_JSON).read_text(encoding="utf-8")))
