#!/usr/bin/env bash
# Hearth's GPU check: on a machine with a real GPU, builds hearth-cli, writes
# the speed models (random weights, real shapes, `hearth-cli gen-model`), runs
# `hearth-cli bench --backend vulkan` on each and, when its path is given, the
# reference engine's Vulkan `llama-bench` on the same files, and prints one
# JSON line per model with both engines' prefill (pp) and decode (tg) tokens/s
# and the fraction of the GPU's memory bandwidth that decode reaches. Hearth
# runs once per product path (`--gpu-path plain` and `int-dot`, decode and
# prefill tiles alike; the automatic choice is the main figure), so each
# path's speed is on record.
#
# usage: packaging/gpu-check.sh [--ref-bench PATH] [--gpu-bandwidth GBPS]
#                               [--hearth-cli PATH] [--work DIR] [--ci]
#
#   --ref-bench PATH      the reference engine's llama-bench, built with Vulkan
#   --gpu-bandwidth GBPS  the GPU's memory bandwidth in GB/s (its data sheet);
#                         without it the fraction is null, except on a software
#                         device (lavapipe), whose memory is the CPU's: there
#                         bench's measured read bandwidth is used
#   --hearth-cli PATH     use this hearth-cli instead of building one
#   --work DIR            models and the build go here (default build/gpu-check)
#   --ci                  small sizes (a tiny model, few tokens): the suite runs
#                         this on lavapipe so the script cannot rot
#
# Budget: under 8 minutes on a machine with a GPU and 8+ cores (a Release
# build of hearth-cli alone, four models of up to 1.2 GB, pp 512 / tg 128,
# 3 repetitions each). Models are kept in the work folder for reruns.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=speed-common.sh
source "$root/packaging/speed-common.sh"

ref_bench=""
gpu_bandwidth=""
cli=""
work="$root/build/gpu-check"
ci=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ref-bench) ref_bench="$2"; shift 2 ;;
    --gpu-bandwidth) gpu_bandwidth="$2"; shift 2 ;;
    --hearth-cli) cli="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --ci) ci=1; shift ;;
    -h|--help) speed_help "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "gpu-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$ref_bench" ] && [ ! -x "$ref_bench" ]; then
  echo "gpu-check: --ref-bench '$ref_bench' is not an executable file" >&2
  exit 2
fi
if [ -n "$gpu_bandwidth" ] && ! [[ "$gpu_bandwidth" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "gpu-check: --gpu-bandwidth wants GB/s as a number, got '$gpu_bandwidth'" >&2
  exit 2
fi

speed_prepare gpu-check "$cli" "$work" "$ci"

for entry in "${models[@]}"; do
  read -r name shape vocab type <<<"$entry"
  file="$(write_speed_model "$cli" "$work/models" "$name" "$shape" "$vocab" "$type")"
  hearth_json="$work/$name.hearth.json"
  "$cli" bench -m "$file" -p "$pp" -n "$tg" -r "$reps" --backend vulkan --gpu-layers all --json >"$hearth_json"
  for path in plain int-dot; do
    # A device without integer dot products refuses int-dot (bench then runs
    # on the CPU, which the JSON below notices): its line says why.
    if ! "$cli" bench -m "$file" -p "$pp" -n "$tg" -r "$reps" --backend vulkan --gpu-layers all \
        --gpu-path "$path" --json >"$work/$name.hearth-$path.json" 2>"$work/$name.hearth-$path.err"; then
      rm -f "$work/$name.hearth-$path.json"
    fi
  done
  ref_json="$work/$name.ref.json"
  rm -f "$ref_json"
  if [ -n "$ref_bench" ]; then
    # -ngl 99: every layer on the GPU, as Hearth's --gpu-layers all.
    "$ref_bench" -m "$file" -p "$pp" -n "$tg" -r "$reps" -ngl 99 -o json >"$ref_json"
  fi
  PYTHONPATH="$root/packaging" PYTHONDONTWRITEBYTECODE=1 python3 - "$name" "$hearth_json" "$ref_json" "$gpu_bandwidth" "$work/$name.hearth" <<'PY'
import json, os, sys
from speed_reference import reference_figures

name, hearth_path, ref_path, bandwidth_arg, path_prefix = sys.argv[1:6]
with open(hearth_path) as f:
    h = json.load(f)
for key in ("pp_tps", "tg_tps", "weight_bytes_per_token", "backend"):
    if key not in h:
        sys.exit(f"gpu-check: {hearth_path}: hearth-cli bench printed no '{key}'")
device = str(h.get("device", h["backend"]))
software = "llvmpipe" in device.lower() or "lavapipe" in device.lower()
bandwidth, source = None, None
if bandwidth_arg:
    bandwidth, source = float(bandwidth_arg), "given"
elif software and h.get("read_bandwidth_gbps"):
    # A software device's memory is the CPU's: bench measured it.
    bandwidth, source = float(h["read_bandwidth_gbps"]), "cpu read bandwidth (software device)"

def fraction(tg):
    if not bandwidth or tg is None:
        return None
    return h["weight_bytes_per_token"] * tg / (bandwidth * 1e9)

ref = None
if ref_path and os.path.exists(ref_path):
    ref_pp, ref_tg = reference_figures(ref_path, "gpu-check")
    ref = {"pp_tps": ref_pp, "tg_tps": ref_tg, "tg_bandwidth_fraction": fraction(ref_tg)}

# Each forced matrix-vector path: its speed, or why it did not run on the GPU.
paths = {}
for path in ("plain", "int-dot"):
    run_path = f"{path_prefix}-{path}.json"
    if os.path.exists(run_path):
        with open(run_path) as f:
            p = json.load(f)
        if p.get("backend") == "vulkan" and (p.get("pipeline") or {}).get("matvec") == path:
            paths[path] = {"pp_tps": p["pp_tps"], "tg_tps": p["tg_tps"],
                           "tg_bandwidth_fraction": fraction(p["tg_tps"])}
            continue
    err_path = f"{path_prefix}-{path}.err"
    reason = ""
    if os.path.exists(err_path):
        with open(err_path) as f:
            lines = [l.strip() for l in f if "Vulkan" in l or "error" in l.lower()]
        reason = lines[-1] if lines else ""
    paths[path] = {"error": reason or "did not run on the GPU"}

line = {
    "model": name,
    "device": device,
    "pipeline": h.get("pipeline"),
    "pp_tokens": h.get("pp_tokens"),
    "tg_tokens": h.get("tg_tokens"),
    "weight_bytes_per_token": h["weight_bytes_per_token"],
    "gpu_bandwidth_gbps": bandwidth,
    "gpu_bandwidth_source": source,
    "hearth": {"pp_tps": h["pp_tps"], "tg_tps": h["tg_tps"], "tg_bandwidth_fraction": fraction(h["tg_tps"])},
    "hearth_paths": paths,
    "reference": ref,
    "pp_ratio": h["pp_tps"] / ref["pp_tps"] if ref else None,
    "tg_ratio": h["tg_tps"] / ref["tg_tps"] if ref else None,
}
print(json.dumps(line), flush=True)
PY
done
