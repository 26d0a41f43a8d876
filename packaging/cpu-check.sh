#!/usr/bin/env bash
# Hearth's CPU check: runs `hearth-cli bench` on the speed models at each CPU
# kernel level (`--cpu-kernels`), and the reference engine's `llama-bench`
# built for the same instructions when its path is given, and prints one
# JSON line per model and level with both engines' prefill (pp) and decode
# (tg) tokens/s (the mean over the repetitions), their ratios, and the memory
# read bandwidth measured around Hearth's decode with the fraction of it
# reached. The two engines alternate repetition by repetition (Hearth,
# reference, Hearth, ...), so a machine whose speed drifts (a shared host's
# memory bandwidth does, within minutes) affects both alike.
#
# usage: packaging/cpu-check.sh [--ref-bench PATH] [--ref-bench-avx2 PATH]
#                               [--levels L,L] [--threads N] [--reps N]
#                               [--hearth-cli PATH] [--work DIR] [--ci]
#
#   --ref-bench PATH       the reference's llama-bench built for this CPU
#                          (native): compared with the avx512 and NEON levels
#   --ref-bench-avx2 PATH  the reference's llama-bench built for AVX2 only (no
#                          AVX-512, no VNNI): compared with avx2 and avx-vnni
#   --levels L,L           kernel levels to run (default: avx512,avx-vnni,avx2
#                          on x86, neon-i8mm,neon-dotprod,neon on ARM); a level the CPU
#                          lacks gives a line saying which level it runs instead
#   --threads N            threads for both engines (default 2)
#   --reps N               repetitions of each engine, alternated (default 3;
#                          1 with --ci)
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
reps_asked=""
cli=""
work="$root/build/cpu-check"
ci=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ref-bench) ref_bench="$2"; shift 2 ;;
    --ref-bench-avx2) ref_bench_avx2="$2"; shift 2 ;;
    --levels) levels="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --reps) reps_asked="$2"; shift 2 ;;
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
if [ -n "$reps_asked" ] && ! [[ "$reps_asked" =~ ^[1-9][0-9]*$ ]]; then
  echo "cpu-check: --reps wants a positive count, got '$reps_asked'" >&2
  exit 2
fi
if [ -z "$levels" ]; then
  case "$(uname -m)" in
    aarch64|arm64) levels="neon-i8mm,neon-dotprod,neon" ;;
    *) levels="avx512,avx-vnni,avx2" ;;
  esac
fi
IFS=',' read -r -a level_list <<<"$levels"
for level in "${level_list[@]}"; do
  case "$level" in
    scalar|neon|neon-dotprod|neon-i8mm|avx2|avx-vnni|avx512) ;;
    *) echo "cpu-check: --levels: '$level' is not one of scalar, neon, neon-dotprod, neon-i8mm, avx2, avx-vnni, avx512" >&2
       exit 2 ;;
  esac
done

speed_prepare cpu-check "$cli" "$work" "$ci"
[ -z "$reps_asked" ] || reps="$reps_asked"

for entry in "${models[@]}"; do
  read -r name shape vocab type <<<"$entry"
  file="$(write_speed_model "$cli" "$work/models" "$name" "$shape" "$vocab" "$type")"
  for level in "${level_list[@]}"; do
    case "$level" in
      avx2|avx-vnni) ref="$ref_bench_avx2" ;;
      scalar) ref="" ;;
      *) ref="$ref_bench" ;;
    esac
    rm -f "$work/$name.$level".*.json
    ran=""
    for ((rep = 1; rep <= reps; rep++)); do
      hearth_json="$work/$name.$level.hearth.$rep.json"
      "$cli" bench -m "$file" -t "$threads" -p "$pp" -n "$tg" -r 1 --backend cpu --cpu-kernels "$level" \
        --json >"$hearth_json"
      # The level Hearth ran ("CPU (2 threads, avx2 kernels)"): a CPU without
      # the one asked for runs a lower one, which the line reports instead of
      # a comparison.
      ran="$(python3 -c 'import json, re, sys
m = re.search(r"(\S+) kernels", json.load(open(sys.argv[1])).get("device", ""))
print(m.group(1) if m else "")' "$hearth_json")"
      [ "$ran" = "$level" ] || break
      if [ -n "$ref" ]; then
        "$ref" -m "$file" -t "$threads" -p "$pp" -n "$tg" -r 1 -o json >"$work/$name.$level.ref.$rep.json"
      fi
    done
    PYTHONPATH="$root/packaging" PYTHONDONTWRITEBYTECODE=1 python3 - "$name" "$level" "$ran" "$work" "$ref" <<'PY'
import glob, json, os, sys
from speed_reference import reference_figures

name, level, ran, work, ref_exe = sys.argv[1:6]
runs = []
for path in sorted(glob.glob(os.path.join(work, f"{name}.{level}.hearth.*.json"))):
    with open(path) as f:
        h = json.load(f)
    for key in ("pp_tps", "tg_tps", "device", "threads"):
        if key not in h:
            sys.exit(f"cpu-check: {path}: hearth-cli bench printed no '{key}'")
    runs.append(h)
h = runs[0]
line = {"model": name, "level": level, "threads": h["threads"], "pp_tokens": h.get("pp_tokens"),
        "tg_tokens": h.get("tg_tokens")}
if ran != level:
    line["skipped"] = f"this CPU runs {ran or 'no named'} kernels when {level} is asked for"
    print(json.dumps(line), flush=True)
    sys.exit(0)


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


line["repetitions"] = len(runs)
line["hearth"] = {"pp_tps": mean([r["pp_tps"] for r in runs]), "tg_tps": mean([r["tg_tps"] for r in runs]),
                  "read_bandwidth_gbps": mean([r.get("read_bandwidth_gbps") for r in runs]),
                  "tg_bandwidth_fraction": mean([r.get("roofline_fraction") for r in runs])}
ref = None
ref_paths = sorted(glob.glob(os.path.join(work, f"{name}.{level}.ref.*.json")))
if ref_paths:
    figures = [reference_figures(p, "cpu-check") for p in ref_paths]
    ref = {"bench": ref_exe, "pp_tps": mean([pp for pp, _ in figures]), "tg_tps": mean([tg for _, tg in figures])}
line["reference"] = ref
line["pp_ratio"] = line["hearth"]["pp_tps"] / ref["pp_tps"] if ref else None
line["tg_ratio"] = line["hearth"]["tg_tps"] / ref["tg_tps"] if ref else None
print(json.dumps(line), flush=True)
PY
  done
done
