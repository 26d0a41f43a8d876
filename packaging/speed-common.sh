# What Hearth's measuring scripts (gpu-check.sh, cpu-check.sh) share: the
# hearth-cli they run, the sizes, and the speed models (random weights in real
# shapes, written by `hearth-cli gen-model`, so both engines read the same files
# and no download is needed). Sourced, not run.
#
# speed_prepare TAG CLI WORK CI: what both scripts do before their loop over
#   the models. Checks for python3 (the JSON lines), sets `cli` (CLI, or with CLI
#   empty a hearth-cli built (Release) in WORK/build), `pp`, `tg` and `reps`
#   (512 / 128 / 3, or with CI=1 32 / 8 / 1) and `models` (speed_models). TAG
#   names the script in messages; a failure returns 2.
# speed_models CI: prints "name shape vocab type" lines, the four speed models
#   (the 1B shape at Q4_0, Q8_0 and Q4_K_M, the Qwen2.5-0.5B shape at Q4_K_M),
#   or with CI=1 two tiny ones for the suite's runs of the scripts.
# write_speed_model CLI DIR NAME SHAPE VOCAB TYPE: writes DIR/NAME.gguf unless
#   it is there (models are kept for reruns) and prints its path.

# speed_help SCRIPT: prints SCRIPT's header comment (its --help).

# The source tree this file belongs to.
speed_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

speed_hearth_cli() {
  local tag="$1" cli="$2" work="$3"
  if [ -z "$cli" ]; then
    echo "$tag: building hearth-cli (Release) in $work/build" >&2
    cmake -S "$speed_root" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DHEARTH_BUILD_TESTS=OFF \
      -DHEARTH_BUILD_BENCHMARKS=OFF >&2 || return 1
    cmake --build "$work/build" -j "$(nproc)" --target hearth-cli >&2 || return 1
    cli="$work/build/app/hearth-cli"
  fi
  [ -x "$cli" ] || { echo "$tag: no hearth-cli at '$cli'" >&2; return 2; }
  echo "$cli"
}

speed_prepare() {
  local tag="$1" work="$3" ci="$4"
  command -v python3 >/dev/null || { echo "$tag: python3 is needed to write the JSON lines" >&2; return 2; }
  mkdir -p "$work/models"
  cli="$(speed_hearth_cli "$tag" "$2" "$work")" || return 2
  if [ "$ci" = 1 ]; then
    pp=32; tg=8; reps=1
  else
    pp=512; tg=128; reps=3
  fi
  mapfile -t models < <(speed_models "$ci")
}

speed_models() {
  local llama="$speed_root/tests/data/vocab/vocab-llama3.gguf" qwen="$speed_root/tests/data/vocab/vocab-qwen3.gguf"
  if [ "$1" = 1 ]; then
    echo "tiny-q4_0 tiny $llama Q4_0"
    echo "tiny-q4_k_m tiny $llama Q4_K_M"
  else
    echo "llama3.2-1b-q4_0 llama3.2-1b $llama Q4_0"
    echo "llama3.2-1b-q8_0 llama3.2-1b $llama Q8_0"
    echo "llama3.2-1b-q4_k_m llama3.2-1b $llama Q4_K_M"
    echo "qwen2.5-0.5b-q4_k_m qwen2.5-0.5b $qwen Q4_K_M"
  fi
}

write_speed_model() {
  local cli="$1" dir="$2" name="$3" shape="$4" vocab="$5" type="$6"
  local file="$dir/$name.gguf"
  if [ ! -s "$file" ]; then
    echo "writing $name" >&2
    "$cli" gen-model --shape "$shape" --vocab "$vocab" --type "$type" --out "$file" -t "$(nproc)" >&2 || return 1
  fi
  echo "$file"
}

speed_help() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"
}
