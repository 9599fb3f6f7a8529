#!/bin/bash
# Plays Caveman Duels' original controller and koth on the same line-up and
# prints where they agree: every pair of 13 bots (the 9 answers compared in
# ../ORIGIN.md and koth's 4 in ../bots/), 3 duels each, the one listed first
# as the first caveman.
#
#   compare.sh [--record] [ORIGINALS]
#
# ORIGINALS is the controller's repository: a folder holding a checkout of
# it, or a git URL to clone (default https://github.com/KeyboardFire/caveman-duels,
# which needs the network). Either way the commit is pinned (PIN below) and
# every file used is checked against its SHA-256 before anything runs. The
# original bots stay outside koth's repository: they are copied, with the
# controller, into a scratch folder (KOTH_COMPARE_DIR, default a new
# mktemp -d), built there and played from there.
#
# It needs: git, g++, gcc, javac/java, perl, python3, and koth (KOTH, default
# `koth` on PATH) able to run `koth match` (root, or a delegated cgroup).
# About 10 minutes on 2 cores. Not run in CI (it needs the originals, which
# are not in the repository, and the network to fetch them).
#
# With --record it writes the three recorded files of this folder
# (playerlist.txt, out.txt, koth-results.txt) from the run.
# Exit status: 0 when koth agrees on every pair, 1 when not, 2 on a setup
# error (a missing tool, a checksum that does not match).
set -euo pipefail

PIN=249e853eb3725cc7f38ffcd017229a29c37e51bd
URL=https://github.com/KeyboardFire/caveman-duels
HERE=$(cd "$(dirname "$0")" && pwd)
GAME=$(dirname "$HERE")
RECORD=no
if [ "${1:-}" = --record ]; then RECORD=yes; shift; fi
SRC=${1:-$URL}
KOTH=${KOTH:-koth}

die() { echo "compare.sh: $*" >&2; exit 2; }
for t in git g++ gcc javac java perl python3 sha256sum; do
  command -v "$t" >/dev/null || die "$t is not installed; it is needed to build or run the original bots"
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

# Build: the controller as its TESTING.md says, the answers as ORIGIN.md says.
g++ -std=c++11 src/*.cpp -pthread -o CavemanDuels
for j in BinaryCaveman Hodor ViceLeader; do javac -d "players/$j" "players/$j/$j.java"; done
gcc -O2 -o players/Semipatient/Semipatient players/Semipatient/Semipatient.c
gcc -O2 -o mine-alternator "$GAME/bots/alternator.c"
gcc -O2 -o mine-blocker "$GAME/bots/blocker.c"
PY=$(python3 -c 'import sys; print(sys.executable)')

# The line-up, in the controller's order; koth plays the same files.
ORIG=(
  'java -cp "players/BinaryCaveman" BinaryCaveman'
  'java -cp "players/Hodor" Hodor'
  'java -cp "players/ViceLeader" ViceLeader'
  'perl players/PatientWolf/PatientWolf.pl'
  'perl players/SpeculativeSylwester/SpeculativeSylwester.pl'
  "$PY players/Entertainer/Entertainer.py"
  "$PY players/Trickster/Trickster.py"
  "$PY players/MaybeMarkov/MaybeMarkov.py"
  'players/Semipatient/Semipatient'
  "$PY $GAME/bots/sharpener.py"
  './mine-alternator'
  './mine-blocker'
  "$PY $GAME/bots/opener.py"
)
FILES=(
  players/BinaryCaveman/BinaryCaveman.java players/Hodor/Hodor.java players/ViceLeader/ViceLeader.java
  players/PatientWolf/PatientWolf.pl players/SpeculativeSylwester/SpeculativeSylwester.pl
  players/Entertainer/Entertainer.py players/Trickster/Trickster.py players/MaybeMarkov/MaybeMarkov.py
  players/Semipatient/Semipatient.c
  "$GAME/bots/sharpener.py" "$GAME/bots/alternator.c" "$GAME/bots/blocker.c" "$GAME/bots/opener.py"
)
printf '%s\n' "${ORIG[@]}" > playerlist.txt
rm -f out.txt
echo "running the original controller (78 pairs, 3 duels each)..." >&2
./CavemanDuels > controller.log 2>&1

echo "running koth on the same pairs..." >&2
n=${#FILES[@]}
: > koth-results.txt
for ((a = 0; a < n - 1; a++)); do
  for ((b = a + 1; b < n; b++)); do
    "$KOTH" match --game "$GAME" --seed 1 --json "${FILES[$a]}" "${FILES[$b]}" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin); o = sorted(d['outcomes'], key=lambda o: o['seat'])
print($a, $b, int(o[0]['score']), int(o[1]['score']), d['turns'], d['ended_by']['kind'],
      o[0]['status']['kind'], o[1]['status']['kind'], o[0]['invalid_moves'] + o[1]['invalid_moves'], o[0]['timeouts'] + o[1]['timeouts'])
" >> koth-results.txt
  done
done

if [ $RECORD = yes ]; then
  sed "s#$PY #python3 #; s#$GAME/#../#" playerlist.txt > "$HERE/playerlist.txt"
  cp out.txt "$HERE/out.txt"
  { echo "# koth match --game external-games/caveman --seed 1 --json P1 P2, recorded $(date -u +%F) by compare.sh: ID1 ID2 SCORE1 SCORE2 TURNS ENDED_BY STATUS1 STATUS2 INVALID TIMEOUTS (ids: lines of playerlist.txt from 0); see ../ORIGIN.md"
    cat koth-results.txt; } > "$HERE/koth-results.txt"
fi

# Agreement: each pair's duels won by either seat, the controller's then koth's.
python3 - "${ORIG[@]}" <<'EOF'
import sys
names = [c.split()[-1].split('/')[-1].split('.')[0] for c in sys.argv[1:]]
orig = {}
for line in open('out.txt'):
    w = [int(x) for x in line.split()]
    a, b = w[0] >> 8, w[0] & 0xFF
    orig[(a, b)] = (w[1:].count(a), w[1:].count(b))
same = total = 0
for line in open('koth-results.txt'):
    w = line.split()
    a, b, k = int(w[0]), int(w[1]), (int(w[2]), int(w[3]))
    total += 1
    if orig.get((a, b)) == k:
        same += 1
    else:
        print('differs: %s against %s: the controller %s, koth %s' % (names[a], names[b], orig.get((a, b)), k))
print('koth agrees with the original controller on %d of %d pairs' % (same, total))
sys.exit(0 if same == total == len(orig) else 1)
EOF
