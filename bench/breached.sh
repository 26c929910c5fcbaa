#!/usr/bin/env bash
# Breached-password import benchmark: writes a corpus of N lines as the Pwned
# Passwords downloader does (random SHA-1s in upper case, `:COUNT`, CRLF),
# imports it with `gatehouse breached import` (release build) and prints
# lines per second, the filter file's size (bytes per hash) and the import's
# peak resident memory. The corpus is kept in OUT for the next run.
#   bash bench/breached.sh [N]          (N=10000000 by default)
#   GATEHOUSE_BIN=path bash bench/breached.sh 100000   (a binary already built)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-${N:-10000000}}"
OUT="${OUT:-bench/out}/breached"
mkdir -p "$OUT"
if [ -z "${GATEHOUSE_BIN:-}" ]; then
  cargo build --release --quiet --bin gatehouse
  GATEHOUSE_BIN="${CARGO_TARGET_DIR:-target}/release/gatehouse"
fi
[ -x /usr/bin/time ] || { echo "/usr/bin/time is required (apt-get install time)" >&2; exit 1; }

CORPUS="$OUT/corpus-$N.txt"
if [ ! -f "$CORPUS" ]; then
  python3 - "$N" "$CORPUS.part" <<'PY'
import os, random, sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w", newline="") as out:
    done = 0
    while done < n:
        block = min(100_000, n - done)
        raw = os.urandom(20 * block).hex().upper()
        out.write("".join(
            f"{raw[i * 40:(i + 1) * 40]}:{random.randint(1, 1000)}\r\n" for i in range(block)
        ))
        done += block
PY
  mv "$CORPUS.part" "$CORPUS"
fi

FILTER="$OUT/breached-$N.bin"
TIMES="$OUT/time-$N.txt"
/usr/bin/time -v -o "$TIMES" "$GATEHOUSE_BIN" breached import "$CORPUS" --output "$FILTER"
python3 - "$N" "$FILTER" "$TIMES" "$CORPUS" <<'PY'
import os, sys
n, filter_path, times, corpus = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
fields = dict(line.strip().rsplit(": ", 1) for line in open(times) if ": " in line)
wall = fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"]
seconds = 0.0
for part in wall.split(":"):
    seconds = seconds * 60 + float(part)
rss_mb = int(fields["Maximum resident set size (kbytes)"]) / 1024
size = os.path.getsize(filter_path)
print(f"lines:        {n:,} ({os.path.getsize(corpus) / 1e6:,.0f} MB)")
print(f"import:       {seconds:.2f} s wall, {n / seconds:,.0f} lines/s")
print(f"cpu:          {float(fields['User time (seconds)']) + float(fields['System time (seconds)']):.2f} s")
print(f"filter file:  {size:,} bytes ({size / n:.2f} bytes per hash)")
print(f"peak RSS:     {rss_mb:,.1f} MB")
PY
