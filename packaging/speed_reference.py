"""The reference engine's llama-bench results as Hearth's measuring scripts
(gpu-check.sh, cpu-check.sh) read them: `llama-bench -p P -n N -o json` prints
one row per test, the prompt test with n_gen 0 and the generation test with
n_prompt 0, each with its mean tokens/s in avg_ts."""
import json
import sys


def reference_figures(path, tag):
    """(pp tokens/s, tg tokens/s) from the JSON llama-bench wrote to path;
    exits naming the file when either row is missing."""
    with open(path) as f:
        rows = json.load(f)
    pp_rows = [r for r in rows if r.get("n_prompt", 0) > 0 and r.get("n_gen", 0) == 0]
    tg_rows = [r for r in rows if r.get("n_gen", 0) > 0 and r.get("n_prompt", 0) == 0]
    if not pp_rows or not tg_rows:
        sys.exit(f"{tag}: {path}: llama-bench printed no pp and tg rows")
    return pp_rows[0]["avg_ts"], tg_rows[0]["avg_ts"]
