#!/usr/bin/env python3
"""Runs packaging/gpu-check.sh in its CI mode (tiny models, on whatever Vulkan
device the suite uses: lavapipe) and checks what it prints: one JSON line per
model with Hearth's pp/tg (the automatic pipeline and each forced
matrix-vector path), the device, and a bandwidth fraction that follows from
the bench figures; and that bad arguments are refused with a reason.

usage: gpu_check_test.py SOURCE_DIR HEARTH_CLI WORK_DIR
"""
import json
import os
import subprocess
import sys


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    source, cli, work = sys.argv[1:4]
    script = os.path.join(source, "packaging", "gpu-check.sh")

    # Refusals: each names the bad value and exits 2 before any work.
    for args, needle in ((["--ref-bench", os.path.join(work, "no-such-llama-bench")], "no-such-llama-bench"),
                         (["--gpu-bandwidth", "fast"], "fast"),
                         (["--frobnicate"], "--frobnicate")):
        r = subprocess.run(["bash", script, "--ci", "--hearth-cli", cli, "--work", work] + args,
                           capture_output=True, text=True)
        if r.returncode != 2 or needle not in r.stderr:
            fail(f"{args}: expected exit 2 naming '{needle}', got {r.returncode}: {r.stderr.strip()}")

    r = subprocess.run(["bash", script, "--ci", "--hearth-cli", cli, "--work", work],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"gpu-check.sh --ci exited {r.returncode}:\n{r.stderr}")
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    if [json.loads(l)["model"] for l in lines] != ["tiny-q4_0", "tiny-q4_k_m"]:
        fail(f"expected one line per CI model, got:\n{r.stdout}")
    for line in lines:
        j = json.loads(line)
        model_file = os.path.join(work, "models", j["model"] + ".gguf")
        size = os.path.getsize(model_file)
        # Every weight but the token embedding's rows is read per token: most
        # of the file, never more than it.
        if not (0.3 * size < j["weight_bytes_per_token"] <= size):
            fail(f"{j['model']}: {j['weight_bytes_per_token']} bytes per token for a {size}-byte file")
        if not (j["hearth"]["pp_tps"] > 0 and j["hearth"]["tg_tps"] > 0):
            fail(f"{j['model']}: no speed: {j['hearth']}")
        if (j["pp_tokens"], j["tg_tokens"]) != (32, 8):
            fail(f"{j['model']}: CI sizes not used: {j['pp_tokens']}, {j['tg_tokens']}")
        device = j["device"].lower()
        if "llvmpipe" in device:
            # A software device: the fraction is against the CPU's measured bandwidth.
            bw = j["gpu_bandwidth_gbps"]
            if not bw or bw <= 0 or "software" not in (j["gpu_bandwidth_source"] or ""):
                fail(f"{j['model']}: software device without its bandwidth: {line}")
            want = j["weight_bytes_per_token"] * j["hearth"]["tg_tps"] / (bw * 1e9)
            if abs(j["hearth"]["tg_bandwidth_fraction"] - want) > 1e-9 * max(1.0, want):
                fail(f"{j['model']}: fraction {j['hearth']['tg_bandwidth_fraction']} != {want}")
        # Every matrix-vector path ran on the device (lavapipe has integer
        # dot products), and the automatic choice is named.
        if (j["pipeline"] or {}).get("matvec") not in ("plain", "int-dot"):
            fail(f"{j['model']}: no pipeline choice: {line}")
        for path in ("plain", "int-dot"):
            figures = j["hearth_paths"].get(path, {})
            if not (figures.get("pp_tps", 0) > 0 and figures.get("tg_tps", 0) > 0):
                fail(f"{j['model']}: --gpu-path {path} gave no speed: {figures}")
        if j["reference"] is not None or j["tg_ratio"] is not None:
            fail(f"{j['model']}: a reference figure without --ref-bench: {line}")
    print(r.stdout, end="")


if __name__ == "__main__":
    main()
