"""Two OpenAI-compatible servers serving models of the same name are two models.

One stub always answers "Yes", the other "No", both as ``stub-model``. Runs against each, into one
study: the second server must be asked (nothing of the first server's is reused) and the study must
hold two backends, each with its own answers.
"""

from __future__ import annotations

from pathlib import Path

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)

from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import Store

PROMPTS = [
    Prompt(
        probe="http",
        language="en",
        options=("Yes", "No"),
        meta={"i": i},
        messages=(Message(role="user", content=f"Would you help person {i}? Answer Yes or No."),),
    )
    for i in range(6)
]


def test_two_servers_with_one_model_name_are_two_models(tmp_path: Path) -> None:
    answers, totals, ids = {}, {}, {}
    with (
        stub_mod.start_stub_thread("--answer", "Yes") as yes,
        stub_mod.start_stub_thread("--answer", "No") as no,
        Store(tmp_path) as store,
    ):
        for name, server in (("yes", yes), ("no", no)):
            backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=server.url, structured="off"))
            ids[name] = backend.id
            totals[name] = run_plan(PROMPTS, backend, store, GenerationSettings(max_tokens=4), progress=False)
            backend.close()
            answers[name] = {str(r[0]) for r in store.conn.execute(
                "SELECT text FROM responses WHERE backend_id = ?", (backend.id,))}
        asked = {name: server.stats()["requests"] for name, server in (("yes", yes), ("no", no))}
        run_backends = {r[0] for r in store.conn.execute("SELECT backend_id FROM runs")}
        response_backends = {r[0] for r in store.conn.execute("SELECT DISTINCT backend_id FROM responses")}
    assert (totals["no"].cached, totals["no"].new) == (0, 6)  # the second server was asked
    assert asked["no"] >= 6
    assert answers == {"yes": {"Yes."}, "no": {"No."}}
    assert ids["yes"] != ids["no"]
    assert run_backends == response_backends == set(ids.values())
    assert ids["yes"] == f"openai:stub-model@http://127.0.0.1:{yes.port}/v1"
