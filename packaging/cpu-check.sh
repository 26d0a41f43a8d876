#!/usr/bin/env bash
# Hearth's CPU check: runs `hearth-cli bench` on the speed models at each CPU
# kernel level (`--cpu-kernels`), and right after each run the reference
# engine's `llama-bench` built for the same instructions when its path is
# given, and prints one JSON line per model and level with both engines'
# prefill (pp) and decode (tg) tokens/s, their ratios, and the memory read
# bandwidth measured around Hearth's decode with the fraction of it reached.
# The two engines alternate model by model, so a machine whose speed drifts
# (a shared host's memory bandwidth does) affects both alike.
#
# usage: packaging/cpu-check.sh [--ref-bench PATH] [--ref-bench-avx2 PATH]
#                               [--levels L,L] [--threads N]
#                               [--hearth-cli PATH] [--work DIR] [--ci]
#
#   --ref-bench PATH       the reference's llama-bench built for this CPU
#                          (native): compared with the avx512 and NEON levels
#   --ref-bench-avx2 PATH  the reference's llama-bench built for AVX2 only (no
#                          AVX-512, no VNNI): compared with avx2 and avx-vnni
#   --levels L,L           kernel levels to run (default: avx512,avx-vnni,avx2
#                          on x86, neon-dotprod,neon on ARM); a level the CPU
#                          lacks gives a line saying which level it runs instead
#   --threads N            threads for both engines (default 2)
#   --hearth-cli PATH      use this hearth-cli instead of building one
#   --work DIR             models and the build go here (default build/cpu-check)
#   --ci                   small sizes (tiny models, few tokens): the suite runs
#                          this so the script cannot rot
#
# Budget: about 20 minutes on 2 cores with both references (four models of up
# to 1.3 GB, pp 512 / tg 128, 3 repetitions, three levels). Models are kept
# in the work folder for reruns (packaging/gpu-check.sh writes the same ones).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=speed-common.sh
source "$root/packaging/speed-common.sh"

ref_bench=""
ref_bench_avx2=""
levels=""
threads=2
cli=""
work="$root/build/cpu-check"
ci=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ref-bench) ref_bench="$2"; shift 2 ;;
    --ref-bench-avx2) ref_bench_avx2="$2"; shift 2 ;;
    --levels) levels="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --hearth-cli) cli="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --ci) ci=1; shift ;;
    -h|--help) speed_help "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "cpu-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for ref in "$ref_bench" "$ref_bench_avx2"; do
  if [ -n "$ref" ] && [ ! -x "$ref" ]; then
    echo "cpu-check: reference '$ref' is not an executable file" >&2
    exit 2
  fi
done
if ! [[ "$threads" =~ ^[1-9][0-9]*$ ]]; then
  echo "cpu-check: --threads wants a positive count, got '$threads'" >&2
  exit 2
fi
if [ -z "$levels" ]; then
  case "$(uname -m)" in
    aarch64|arm64) levels="neon-dotprod,neon" ;;
    *) levels="avx512,avx-vnni,avx2" ;;
  esac
fi
IFS=',' read -r -a level_list <<<"$levels"
for level in "${level_list[@]}"; do
  case "$level" in
    scalar|neon|neon-dotprod|avx2|avx-vnni|avx512) ;;
    *) echo "cpu-check: --levels: '$level' is not one of scalar, neon, neon-dotprod, avx2, avx-vnni, avx512" >&2
       exit 2 ;;
  esac
done

speed_prepare cpu-check "$cli" "$work" "$ci"

for entry in "${models[@]}"; do
  read -r name shape vocab type <<<"$entry"
  file="$(write_speed_model "$cli" "$work/models" "$name" "$shape" "$vocab" "$type")"
  for level in "${level_list[@]}"; do
    hearth_json="$work/$name.$level.hearth.json"
    "$cli" bench -m "$file" -t "$threads" -p "$pp" -n "$tg" -r "$reps" --backend cpu --cpu-kernels "$level" \
      --json >"$hearth_json"
    case "$level" in
      avx2|avx-vnni) ref="$ref_bench_avx2" ;;
      scalar) ref="" ;;
      *) ref="$ref_bench" ;;
    esac
    ref_json="$work/$name.$level.ref.json"
    rm -f "$ref_json"
    # The level Hearth ran ("CPU (2 threads, avx2 kernels)"): a CPU without
    # the one asked for runs a lower one, which the line reports instead of a
    # comparison.
    ran="$(python3 -c 'import json, re, sys
m = re.search(r"(\S+) kernels", json.load(open(sys.argv[1])).get("device", ""))
print(m.group(1) if m else "")' "$hearth_json")"
    if [ -n "$ref" ] && [ "$ran" = "$level" ]; then
      "$ref" -m "$file" -t "$threads" -p "$pp" -n "$tg" -r "$reps" -o json >"$ref_json"
    fi
    PYTHONPATH="$root/packaging" PYTHONDONTWRITEBYTECODE=1 python3 - "$name" "$level" "$ran" "$hearth_json" "$ref_json" "$ref" <<'PY'
import json, os, sys
from speed_reference import reference_figures

name, level, ran, hearth_path, ref_path, ref_exe = sys.argv[1:7]
with open(hearth_path) as f:
    h = json.load(f)
for key in ("pp_tps", "tg_tps", "device", "threads"):
    if key not in h:
        sys.exit(f"cpu-check: {hearth_path}: hearth-cli bench printed no '{key}'")
line = {"model": name, "level": level, "threads": h["threads"], "pp_tokens": h.get("pp_tokens"),
        "tg_tokens": h.get("tg_tokens")}
if ran != level:
    line["skipped"] = f"this CPU runs {ran or 'no named'} kernels when {level} is asked for"
    print(json.dumps(line), flush=True)
    sys.exit(0)
line["hearth"] = {"pp_tps": h["pp_tps"], "tg_tps": h["tg_tps"],
                  "read_bandwidth_gbps": h.get("read_bandwidth_gbps"),
                  "tg_bandwidth_fraction": h.get("roofline_fraction")}
ref = None
if ref_path and os.path.exists(ref_path):
    ref_pp, ref_tg = reference_figures(ref_path, "cpu-check")
    ref = {"bench": ref_exe, "pp_tps": ref_pp, "tg_tps": ref_tg}
line["reference"] = ref
line["pp_ratio"] = h["pp_tps"] / ref["pp_tps"] if ref else None
line["tg_ratio"] = h["tg_tps"] / ref["tg_tps"] if ref else None
print(json.dumps(line), flush=True)
PY
  done
done
