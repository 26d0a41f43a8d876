#!/usr/bin/env bash
# Renders the section-1 manual pages of a fixed list of Debian packages to plain
# text, one file per page, for bench_retrieval. The pages are the machine's own
# (installed with the packages), so nothing is fetched and the corpus is not kept
# in the repository. Usage: make_corpus.sh OUT_DIR
set -euo pipefail
out="${1:?usage: make_corpus.sh OUT_DIR}"
mkdir -p "$out"
packages=(coreutils tar grep sed gzip findutils diffutils procps git-man openssh-client curl wget bash util-linux)
count=0
for pkg in "${packages[@]}"; do
  dpkg -L "$pkg" 2>/dev/null | grep -E '/man/man1/[^/]+\.1\.gz$' | while read -r page; do
    name="$(basename "$page" .1.gz)"
    [ -s "$out/$name.txt" ] && continue
    # man reads standard input otherwise, which is this loop's list of pages.
    MANWIDTH=80 man --nh --nj -l "$page" < /dev/null 2>/dev/null | col -bx > "$out/$name.txt" || rm -f "$out/$name.txt"
  done
done
count=$(find "$out" -name '*.txt' | wc -l)
echo "make_corpus: $count pages in $out"
