#!/bin/bash
# Plays Mafia's original controller and koth on the same line-ups and
# prints where they agree: the line-ups of koth's bots (../bots/) listed by
# lineups.txt, each once with the seed it gives.
#
#   compare.sh [--record] [ORIGINALS]
#
# ORIGINALS is the controller's repository: a folder holding a checkout of
# it, or a git URL to clone (default https://github.com/undergroundmonorail/Mafia-Engine,
# which needs the network). Either way the commit is pinned (PIN below) and
# every file used is checked against its SHA-256 before anything runs. The
# original code stays outside koth's repository: it is copied into a
# scratch folder (KOTH_COMPARE_DIR, default a new mktemp -d) and run there.
#
# The controller (Python 2) draws every random number from Python's
# `random`, unseeded, and takes its players in the order os.listdir gives
# their folders. It is run unmodified, from a copy, after `random.seed(SEED)`
# in the same interpreter (runpy), so that its draws are those koth's
# referee makes with `--seed SEED`; koth gets the bots in the order the
# controller's os.listdir gave them. Each player's folder holds a `run`
# starting the bot, the files the controller's README asks for, and
# `name`, the player's name (what koth's referee writes in a bot's folder).
#
# Compared for each line-up: the controller's whole log (tmp/log: the deal,
# every message said, every vote, every night's actions, the winner) with
# the events of koth's replay, line for line, and its winner with koth's
# scores.
#
# It needs: git, python2 (2.7), python3, gcc, sha256sum, and koth (KOTH,
# default `koth` on PATH) able to run `koth match` (root, or a delegated
# cgroup). About 10 minutes on 2 cores. Not run in CI (it needs the
# originals, which are not in the repository).
#
# With --record it writes logs.txt and koth-results.txt of this folder.
# Exit status: 0 when koth agrees on every line-up, 1 when not, 2 on a setup
# error (a missing tool, a checksum that does not match).
set -euo pipefail

PIN=b99c1dafcef2b9e0a298f271224def74bc4dd03e
URL=https://github.com/undergroundmonorail/Mafia-Engine
HERE=$(cd "$(dirname "$0")" && pwd)
GAME=$(dirname "$HERE")
RECORD=no
if [ "${1:-}" = --record ]; then RECORD=yes; shift; fi
SRC=${1:-$URL}
KOTH=${KOTH:-koth}
PY2=${PY2:-python2}

die() { echo "compare.sh: $*" >&2; exit 2; }
for t in git "$PY2" python3 gcc sha256sum; do
  command -v "$t" >/dev/null || die "$t is not installed; it is needed to run the original controller or the bots"
done
"$PY2" -c 'import sys; sys.exit(sys.version_info[:2] != (2, 7))' || die "$PY2 is not Python 2.7 (set PY2=...)"
command -v "$KOTH" >/dev/null || die "koth not found (set KOTH=/path/to/koth)"

W=${KOTH_COMPARE_DIR:-$(mktemp -d)}
mkdir -p "$W"
echo "work folder: $W" >&2
rm -rf "$W/orig" "$W/runs"
if [ -d "$SRC" ] && ! git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  cp -a "$SRC" "$W/orig"  # a plain copy, no git: the checksums below vouch for it
else
  git clone -q "$SRC" "$W/orig" || die "cannot clone $SRC (no network? give a local copy of the repository instead)"
  git -C "$W/orig" checkout -q "$PIN" || die "$SRC has no commit $PIN"
fi
(cd "$W/orig" && sha256sum --quiet -c "$HERE/originals.sha256") || die "the originals differ from the pinned ones (originals.sha256): not the same code"
mkdir -p "$W/bin"
gcc -O2 -o "$W/bin/follower" "$GAME/bots/follower.c"
PY3=$(command -v python3)

# The controller, unmodified, after random.seed(SEED): runpy in the same
# interpreter; its folder on sys.path, as running controller/main.py puts it.
cat > "$W/seeded.py" <<'PY'
import random, runpy, sys
seed = int(sys.argv[1])
sys.path.insert(0, 'controller')
sys.argv = ['controller/main.py']
random.seed(seed)
runpy.run_path('controller/main.py', run_name='__main__')
PY

: > "$W/koth-results.txt"
: > "$W/logs.txt"
same=0
total=0
while read -r seed files <&3; do
  case "$seed" in ''|'#'*) continue ;; esac
  total=$((total + 1))
  R="$W/runs/$total"
  mkdir -p "$R"
  cp -a "$W/orig/." "$R/game"
  rm -rf "$R/game/players"/*
  : > "$R/game/tmp/log"
  for f in $files; do
    n=${f%%.*}
    d="$R/game/players/$n"
    mkdir -p "$d"
    : > "$d/to_server"; : > "$d/from_server"; : > "$d/players"
    echo "$n" > "$d/name"
    case "$f" in
      sheriff*.py) printf '#!/bin/sh\nexec %s %s\n' "$PY3" "$GAME/bots/sheriff.py" > "$d/run" ;;
      follower*.c) printf '#!/bin/sh\nexec %s\n' "$W/bin/follower" > "$d/run" ;;
      *) die "lineups.txt: no bot for $f" ;;
    esac
    chmod +x "$d/run"
    mkdir -p "$R/koth-bots"
    cp "$GAME/bots/${n%%[0-9]*}.${f##*.}" "$R/koth-bots/$f"
  done
  # The controller's order of its players: os.listdir of players/.
  order=$(cd "$R/game/players" && "$PY2" -c 'import os; print(" ".join(os.listdir(".")))')
  # A game where nobody ever dies never ends there: 20 minutes at most.
  winner=$(cd "$R/game" && timeout 1200 "$PY2" "$W/seeded.py" "$seed" </dev/null) || winner="NO END (stopped after 20 minutes)"
  paths=()
  for n in $order; do paths+=("$(ls "$R/koth-bots/$n".*)"); done
  "$KOTH" match --game "$GAME" --seed "$seed" --json --replay "$R/replay.json" "${paths[@]}" > "$R/koth.json" 2>/dev/null </dev/null
  python3 - "$R" "$seed" "$winner" "$order" >> "$W/koth-results.txt" <<'PY'
import json, sys
r, seed, winner, order = sys.argv[1:]
d = json.load(open(r + '/koth.json'))
o = sorted(d['outcomes'], key=lambda o: o['seat'])
print(seed, ' '.join(order.split()), '|', winner, '|', ' '.join('%g' % x['score'] for x in o), d['turns'], d['ended_by']['kind'],
      ' '.join(x['status']['kind'] for x in o), sum(x['invalid_moves'] for x in o), sum(x['timeouts'] for x in o))
PY
  python3 - "$R" >> "$W/logs.txt" <<'PY'
import hashlib, json, sys
r = sys.argv[1]
orig = open(r + '/game/tmp/log').read()
replay = json.load(open(r + '/replay.json'))
koth = ''.join(e['text'] + '\n' for t in replay['turns'] for e in t.get('events', []) if e.get('type') == 'log')
digest = lambda s: hashlib.sha256(s.encode()).hexdigest()[:16]
print(len(orig.splitlines()), digest(orig), len(koth.splitlines()), digest(koth))
open(r + '/koth-log', 'w').write(koth)
PY
  if cmp -s "$R/game/tmp/log" "$R/koth-log"; then
    same=$((same + 1))
  else
    echo "differs: line-up $total (seed $seed: $order); diff $R/game/tmp/log $R/koth-log" >&2
  fi
done 3< "$HERE/lineups.txt"

if [ $RECORD = yes ]; then
  { echo "# Each line-up of lineups.txt in turn, recorded $(date -u +%F) by compare.sh: SEED, the seats in the controller's order |"
    echo "# the controller's winner | koth's scores in that order, turns, how it ended, every seat's status, invalid answers, timeouts"
    cat "$W/koth-results.txt"; } > "$HERE/koth-results.txt"
  { echo "# Each line-up of lineups.txt in turn, recorded $(date -u +%F) by compare.sh: the controller's tmp/log (lines, SHA-256 prefix),"
    echo "# then the log lines of koth's replay events (lines, SHA-256 prefix); equal digests are equal logs"
    cat "$W/logs.txt"; } > "$HERE/logs.txt"
fi
echo "koth agrees with the original controller on $same of $total line-ups (the whole log of each)"
[ "$same" = "$total" ] || exit 1
