#!/usr/bin/env python3
"""Runs packaging/cpu-check.sh in its CI mode (tiny models) and checks what it
prints: one JSON line per model and kernel level with Hearth's pp/tg at the
level asked for (or, where the CPU lacks it, a line saying which level runs),
the reference's figures and the ratios when a reference is given; and that
bad arguments are refused with a reason.

The reference here is a stand-in for llama-bench: a script that records its
arguments and prints two result rows in llama-bench's JSON form (-o json), as
the real program does, so the test checks what cpu-check.sh passes it and
how it reads the rows. The real program is what the script is for on a
developer's machine (docs/performance.md).

usage: cpu_check_test.py SOURCE_DIR HEARTH_CLI WORK_DIR
"""
import json
import os
import platform
import re
import stat
import subprocess
import sys

# neon on an x86 CPU (the suite's) runs the scalar kernels: the skip's line.
LEVELS = ["avx512", "avx-vnni", "avx2", "neon", "scalar"]
REF_PP, REF_TG = 10.0, 4.0


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def write_reference(work, calls):
    path = os.path.join(work, "reference-bench")
    with open(path, "w") as f:
        f.write(f"""#!/usr/bin/env bash
echo "$@" >> {calls}
cat <<'EOF'
[{{"n_prompt": 32, "n_gen": 0, "avg_ts": {REF_PP}}}, {{"n_prompt": 0, "n_gen": 8, "avg_ts": {REF_TG}}}]
EOF
""")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def main():
    source, cli, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    script = os.path.join(source, "packaging", "cpu-check.sh")
    base = ["bash", script, "--ci", "--hearth-cli", cli, "--work", work]

    # --help prints the whole header comment, its last line included.
    r = subprocess.run(["bash", script, "--help"], capture_output=True, text=True)
    if r.returncode != 0 or "--ref-bench-avx2" not in r.stdout or "writes the same ones" not in r.stdout:
        fail(f"--help: exit {r.returncode}, printed:\n{r.stdout}")

    # Refusals: each names the bad value and exits 2 before any work.
    for args, needle in ((["--ref-bench", os.path.join(work, "no-such-llama-bench")], "no-such-llama-bench"),
                         (["--threads", "two"], "two"),
                         (["--reps", "0"], "'0'"),
                         (["--levels", "avx2,sse9"], "sse9"),
                         (["--frobnicate"], "--frobnicate")):
        r = subprocess.run(base + args, capture_output=True, text=True)
        if r.returncode != 2 or needle not in r.stderr:
            fail(f"{args}: expected exit 2 naming '{needle}', got {r.returncode}: {r.stderr.strip()}")

    calls = os.path.join(work, "reference-calls.txt")
    if os.path.exists(calls):
        os.remove(calls)
    ref = write_reference(work, calls)
    # Two repetitions of each engine, alternated: every line is the mean of
    # two runs of each, the reference run with -r 1 each time.
    reps = 2
    r = subprocess.run(base + ["--levels", ",".join(LEVELS), "--threads", "2", "--reps", str(reps), "--ref-bench",
                               ref, "--ref-bench-avx2", ref], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"cpu-check.sh --ci exited {r.returncode}:\n{r.stderr}")
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    want = [(m, lv) for m in ("tiny-q4_0", "tiny-q4_k_m") for lv in LEVELS]
    if [(j["model"], j["level"]) for j in lines] != want:
        fail(f"expected one line per CI model and level, got:\n{r.stdout}")

    compared = []
    skipped = []
    for j in lines:
        where = f"{j['model']} at {j['level']}"
        if "skipped" in j:
            # Only a level above what this CPU has may be skipped, and the
            # line names the level that runs instead.
            m = re.search(r"runs (\S+) kernels", j["skipped"])
            if j["level"] == "scalar" or not m or m.group(1) == j["level"]:
                fail(f"{where}: a skip that names no other level: {j}")
            skipped.append(j["level"])
            continue
        h = j["hearth"]
        if not (h["pp_tps"] > 0 and h["tg_tps"] > 0) or (j["pp_tokens"], j["tg_tokens"]) != (32, 8):
            fail(f"{where}: no speed, or not the CI sizes: {j}")
        if j["threads"] != 2:
            fail(f"{where}: --threads 2 not used: {j}")
        if j["repetitions"] != reps:
            fail(f"{where}: not {reps} repetitions: {j}")
        if j["level"] == "scalar":
            if j["reference"] is not None or j["tg_ratio"] is not None:
                fail(f"{where}: the scalar level has no reference build, got {j}")
            continue
        compared.append(j["model"])
        if (j["reference"]["pp_tps"], j["reference"]["tg_tps"]) != (REF_PP, REF_TG):
            fail(f"{where}: the reference's rows were misread: {j['reference']}")
        if abs(j["pp_ratio"] - h["pp_tps"] / REF_PP) > 1e-9 * j["pp_ratio"] or \
           abs(j["tg_ratio"] - h["tg_tps"] / REF_TG) > 1e-9 * j["tg_ratio"]:
            fail(f"{where}: ratios do not follow from the figures: {j}")
    if not compared:
        fail("no level ran with a reference")
    if platform.machine() in ("x86_64", "AMD64") and "neon" not in skipped:
        fail(f"neon ran on an x86 CPU: {r.stdout}")

    # The reference ran once per repetition of each compared line, on the same
    # file and sizes.
    with open(calls) as f:
        invocations = [l.split() for l in f if l.strip()]
    if len(invocations) != reps * len(compared):
        fail(f"{len(invocations)} reference runs for {len(compared)} compared lines of {reps} repetitions")
    for args, model in zip(invocations, [m for m in compared for _ in range(reps)]):
        opts = dict(zip(args[::2], args[1::2]))
        if opts.get("-m") != os.path.join(work, "models", model + ".gguf") or \
           (opts.get("-t"), opts.get("-p"), opts.get("-n"), opts.get("-r"), opts.get("-o")) != ("2", "32", "8", "1", "json"):
            fail(f"reference run for {model} with {args}")
    print(r.stdout, end="")


if __name__ == "__main__":
    main()
