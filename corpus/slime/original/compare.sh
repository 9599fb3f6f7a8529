#!/bin/bash
# Plays Slime: The Territory War's original controller and koth's built-in
# `slime` on the same line-ups and prints where they agree:
#  1. every 4-combination of 7 deterministic bots (35 games, seats in list
#     order, as the controller's getAllMatchups makes them): koth's
#     bots/slime/greedy.py and spreader.c, the starters' bot.c, bot.cpp and
#     bot.js, and ../bots/talker.py and edger.js of this corpus;
#  2. a bot's folder kept from game to game: ../bots/counter.py with three
#     of them, three games in a row (the controller run three times in the
#     same folder, its cache.txt removed in between so that it plays the
#     line-up again; koth with `koth match --data`).
#
#   compare.sh [--record] [ORIGINALS]
#
# ORIGINALS is the controller's repository: a folder holding a checkout or
# plain copy of it, or a git URL to clone (default
# https://github.com/tckmn/slime-territory-war, which needs the network).
# The commit is pinned (PIN below) and every file used is checked against
# originals.sha256 before anything runs. The originals stay outside koth's
# repository: the controller and the bots are copied into a scratch folder
# (KOTH_COMPARE_DIR, default a new mktemp -d), each bot into
# players/<name>/ as the original's bots lived, built and played there.
#
# It needs: git, g++, gcc, python3, node, sha256sum, and koth (KOTH, default
# `koth` on PATH) able to run `koth match` (root, or a delegated cgroup).
# About 2 minutes on 2 cores. Not run in CI (the original is not in the
# repository, and the network is not promised there).
#
# With --record it writes this folder's recorded files from the run:
# playerlist.txt, out.txt and koth-results.txt (the round), persist-out.txt
# and koth-persist.txt (the three games in a row), answers.txt (below).
# Exit status: 0 when koth agrees on every game, 1 when not, 2 on a setup
# error (a missing tool, a checksum that does not match).
set -euo pipefail

PIN=dac219644e50ca93702d1915a2b2dff29e9709b0
URL=https://github.com/tckmn/slime-territory-war
HERE=$(cd "$(dirname "$0")" && pwd)
CORPUS=$(dirname "$HERE")
REPO=$(cd "$CORPUS/../.." && pwd)
RECORD=no
if [ "${1:-}" = --record ]; then RECORD=yes; shift; fi
SRC=${1:-$URL}
KOTH=${KOTH:-koth}

die() { echo "compare.sh: $*" >&2; exit 2; }
for t in git g++ gcc node python3 sha256sum; do
  command -v "$t" >/dev/null || die "$t is not installed; it is needed to build or run the bots"
done
command -v "$KOTH" >/dev/null || die "koth not found (set KOTH=/path/to/koth)"

W=${KOTH_COMPARE_DIR:-$(mktemp -d)}
mkdir -p "$W"
echo "work folder: $W" >&2
rm -rf "$W/orig"
if [ -d "$SRC" ] && ! git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  cp -a "$SRC" "$W/orig"  # a plain copy, no git: the checksums below vouch for it
else
  git clone -q "$SRC" "$W/orig" || die "cannot clone $SRC (no network? give a local copy of the repository instead)"
  git -C "$W/orig" checkout -q "$PIN" || die "$SRC has no commit $PIN"
fi
cd "$W/orig"
sha256sum --quiet -c "$HERE/originals.sha256" || die "the originals differ from the pinned ones (originals.sha256): not the same code"

# The controller, unmodified (MULTITHREADING on, 4 threads, as it is).
g++ -std=c++11 -O2 src/*.cpp -pthread -o SlimeTerritoryWar

# The bots: koth's files, each in players/<name>/ as the original's were.
BOTS=(
  bots/slime/greedy.py bots/slime/spreader.c starters/slime/bot.c starters/slime/bot.cpp
  starters/slime/bot.js corpus/slime/bots/talker.py corpus/slime/bots/edger.js
)
NAMES=(greedy spreader starter-c starter-cpp starter-js talker edger)
cmd() {  # the command the controller runs for bot $1 (its name), built in players/$1/
  local name=$1 file=$2 dir="players/$1" base
  base=$(basename "$file")
  rm -rf "$dir" && mkdir -p "$dir" && cp "$REPO/$file" "$dir/"
  case "$base" in
    *.py) echo "python3 $dir/$base" ;;
    *.js) echo "node $dir/$base" ;;
    *.c) gcc -O2 -o "$dir/bot" "$dir/$base" && echo "$dir/bot" ;;
    *.cpp) g++ -O2 -o "$dir/bot" "$dir/$base" && echo "$dir/bot" ;;
  esac
}
: > playerlist.txt
for i in "${!BOTS[@]}"; do
  printf '%02d%s\n' "$i" "$(cmd "${NAMES[$i]}" "${BOTS[$i]}")" >> playerlist.txt
done
rm -f out.txt cache.txt
echo "running the original controller (35 games)..." >&2
./SlimeTerritoryWar > controller.log 2>&1
cp out.txt round-out.txt
cp playerlist.txt round-playerlist.txt

echo "running koth on the same line-ups..." >&2
koth_game() {  # koth_game IDS... -- FILES... [--data DIR]: one line of results
  "$KOTH" match --game slime --seed 1 --json "$@" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin); o = sorted(d['outcomes'], key=lambda o: o['seat'])
print(' '.join(str(int(x['score'])) for x in o), d['turns'], d['ended_by']['kind'],
      sum(x['invalid_moves'] for x in o), sum(x['timeouts'] for x in o),
      ' '.join(x['status']['kind'] for x in o))"
}
: > koth-results.txt
n=${#BOTS[@]}
for ((a = 0; a < n; a++)); do for ((b = a + 1; b < n; b++)); do
  for ((c = b + 1; c < n; c++)); do for ((d = c + 1; d < n; d++)); do
    echo "$a $b $c $d $(koth_game "$REPO/${BOTS[$a]}" "$REPO/${BOTS[$b]}" "$REPO/${BOTS[$c]}" "$REPO/${BOTS[$d]}")" >> koth-results.txt
  done; done
done; done

# 2. Three games in a row with counter.py's folder kept: the controller
# as the tournament ran it (players/counter/ never cleared), koth with --data.
PERSIST=(corpus/slime/bots/counter.py bots/slime/greedy.py corpus/slime/bots/talker.py corpus/slime/bots/edger.js)
: > playerlist.txt
for i in "${!PERSIST[@]}"; do
  name=$(basename "${PERSIST[$i]}"); name=${name%.*}
  printf '%02d%s\n' "$i" "$(cmd "$name" "${PERSIST[$i]}")" >> playerlist.txt
done
cp playerlist.txt persist-playerlist.txt
rm -f out.txt
for g in 1 2 3; do
  rm -f cache.txt
  ./SlimeTerritoryWar >> controller.log 2>&1
done
cp out.txt persist-out.txt
rm -rf koth-data
: > koth-persist.txt
for g in 1 2 3; do
  echo "$(koth_game --data koth-data "${PERSIST[@]/#/$REPO/}")" >> koth-persist.txt
done

# 3. The controller's own reading of answers (Player::getMove, unmodified,
# linked with a driver of koth's whose "bot" is `cat FILE`; the driver writes
# on stderr, the controller's messages go to stdout): the four numbers it
# made of each answer of answers-in.txt (one Python string literal a
# line: the bytes the bot wrote), -1 -1 -1 -1 for a pass.
cat > driver.cpp <<'CPP'
#include "Player.hpp"
int main(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        Player p(std::string("cat ") + argv[i] + " #", 1);
        CoordsLine c = p.getMove("x");
        std::fprintf(stderr, "%d %d %d %d\n", c.from.x, c.from.y, c.to.x, c.to.y);
    }
}
CPP
g++ -std=c++11 -Isrc driver.cpp src/Player.cpp -o driver
rm -rf answers && mkdir answers
python3 - "$HERE/answers-in.txt" <<'PY'
import ast, sys
cases = [l for l in open(sys.argv[1], encoding="utf-8").read().splitlines() if l and not l.startswith("#")]
for i, line in enumerate(cases):
    open("answers/%03d" % i, "wb").write(ast.literal_eval(line).encode())
PY
ls answers/* | sort | xargs ./driver 2> answers.txt > /dev/null  # its own messages go to stdout

if [ $RECORD = yes ]; then
  cp round-playerlist.txt "$HERE/playerlist.txt"
  cp round-out.txt "$HERE/out.txt"
  cp persist-playerlist.txt persist-out.txt answers.txt "$HERE/"
  { echo "# koth match --game slime --seed 1 --json B1 B2 B3 B4, recorded $(date -u +%F) by compare.sh: ID1 ID2 ID3 ID4 SCORE1 SCORE2 SCORE3 SCORE4 TURNS ENDED_BY INVALID TIMEOUTS STATUS1..4 (ids: lines of playerlist.txt from 0); see ../ORIGIN.md"
    cat koth-results.txt; } > "$HERE/koth-results.txt"
  { echo "# koth match --game slime --seed 1 --json --data DIR counter.py greedy.py talker.py edger.js, three times in a row, recorded $(date -u +%F) by compare.sh: SCORE1..4 TURNS ENDED_BY INVALID TIMEOUTS STATUS1..4"
    cat koth-persist.txt; } > "$HERE/koth-persist.txt"
fi

# Agreement: each game's squares per seat, the controller's then koth's.
python3 - <<'PY'
import sys
def games(path):
    """out.txt: four lines a game, `ID SCORE` (no SCORE when it is 0)."""
    lines = [l.split() for l in open(path) if l.strip()]
    out = []
    for i in range(0, len(lines), 4):
        g = lines[i:i + 4]
        out.append((tuple(int(w[0]) for w in g), tuple(int(w[1]) if len(w) > 1 else 0 for w in g)))
    return out
names = [l[2:].split()[-1].split('/')[1] for l in open('round-playerlist.txt')]
orig = dict(games('round-out.txt'))
same = total = 0
for line in open('koth-results.txt'):
    w = line.split()
    ids, k = tuple(int(x) for x in w[:4]), tuple(int(x) for x in w[4:8])
    total += 1
    if orig.get(ids) == k:
        same += 1
    else:
        print('differs: %s: the controller %s, koth %s' % (' '.join(names[i] for i in ids), orig.get(ids), k))
print('round: koth agrees with the original controller on %d of %d games' % (same, total))
ok = same == total == len(orig)
p = [s for _, s in games('persist-out.txt')]
k = [tuple(int(x) for x in l.split()[:4]) for l in open('koth-persist.txt')]
for g, (a, b) in enumerate(zip(p, k), 1):
    print('kept folder, game %d: the controller %s, koth %s%s' % (g, a, b, '' if a == b else '  DIFFERS'))
ok = ok and p == k and len(p) == 3
cases = [l for l in open('answers.txt')]
print('answers: the controller read %d answers (answers.txt)' % len(cases))
sys.exit(0 if ok else 1)
PY
