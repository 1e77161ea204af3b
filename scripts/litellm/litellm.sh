#!/usr/bin/env bash
# Prints the path of a LiteLLM proxy (`litellm`, PyPI `litellm[proxy]` at the version below), installed
# once into its own Python virtual environment and cached by version. The last line printed is that
# path; everything else goes to stderr. The compatibility tests (test/compat/) run Keel through it.
#
# Installed once: callers at the same time wait on a lock ($KEEL_CACHE_DIR/.litellm-<version>.lock)
# and then find it installed. A virtual environment cannot be moved once made, so it is made in place
# and counts as installed only once its stamp (INSTALLED) is written, last; an install killed midway
# has none and is made again. Verified on every use: its Python must report this litellm version.
# Takes 1 to 3 minutes from PyPI (wheels only); 0.3 s once cached.
#   KEEL_CACHE_DIR  ($XDG_CACHE_HOME/keel, else ~/.cache/keel)
#   KEEL_PYTHON     the Python to make the environment with (python3)
# One block, read whole before any of it runs.
{
set -euo pipefail

version=1.108.7
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
target="$cache_root/litellm-$version"
python=${KEEL_PYTHON:-python3}

problem=""
verified() {
  local out
  problem=""
  if [ ! -f "$target/INSTALLED" ]; then
    [ -e "$target" ] && problem="its install did not finish"
    return 1
  fi
  out=$(timeout 120 "$target/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))' 2>&1) || {
    problem="its Python cannot read litellm's version (exit $?)${out:+: $out}"
    return 1
  }
  if [ "$out" != "$version" ]; then
    problem="it holds litellm $out, not $version"
    return 1
  fi
}

if ! verified; then
  mkdir -p "$cache_root"
  exec 9>"$cache_root/.litellm-$version.lock"
  flock 9
  # Someone else may have installed it while this waited.
  if ! verified; then
    [ -n "$problem" ] && echo "litellm.sh: the cached LiteLLM is not usable ($problem); installing it again" >&2
    rm -rf "$target"
    began=$SECONDS
    echo "litellm.sh: installing litellm[proxy]==$version from PyPI into $target (1 to 3 minutes, once)" >&2
    "$python" -m venv "$target" >&2
    "$target/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
      "litellm[proxy]==$version" >&2
    echo "$version" >"$target/INSTALLED"
    verified || { echo "litellm.sh: installed, but $problem" >&2; exit 1; }
    echo "litellm.sh: installed in $((SECONDS - began)) s" >&2
  fi
fi
echo "$target/bin/litellm"
exit
}
