#!/bin/bash
# Plays the original 1P5 scorer and koth on the same line-up and prints
# where they agree: every ordered pair of 9 bots (the 5 C answers compared
# in ../ORIGIN.md and koth's 4 in ../bots/), 100 rounds each.
#
#   compare.sh [--record] ORIGINALS
#
# ORIGINALS is a folder holding the originals as they are in their posts,
# under these names: scorer.py (the question's "Scorer" block), angel.c,
# devil.c, titfortat.c (the question), mistrust.c
# (https://codegolf.stackexchange.com/a/2358), antihandshake.c
# (https://codegolf.stackexchange.com/a/2389). The challenge has no
# repository: its code lives in the posts of
# https://codegolf.stackexchange.com/questions/2357 (revision as of
# 2011), so this script does not download them: copy each code block into
# its file. Every file is checked against its SHA-256 (originals.sha256)
# before anything runs, so a copy that differs by one character is refused.
# The originals stay outside koth's repository: they are built and played
# in a scratch folder (KOTH_COMPARE_DIR, default a new mktemp -d).
#
# It needs: Python 2 (PYTHON2, default python2; the scorer is Python 2), gcc, python3, node, and koth
# (KOTH, default `koth` on PATH) able to run `koth match` (root, or a
# delegated cgroup). A few minutes on 2 cores. Not run in CI (the originals
# are not in the repository).
#
# The scorer is run unmodified: loaded with an empty warriors folder (its
# tournament loop then runs over nobody) and its own runGame(p1, p2) called
# for each ordered pair. With --record it writes this folder's
# scorer-results.txt and koth-results.txt from the run.
# Exit status: 0 when koth agrees on every pair, 1 when not, 2 on a setup
# error (a missing tool or file, a checksum that does not match).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
GAME=$(dirname "$HERE")
RECORD=no
if [ "${1:-}" = --record ]; then RECORD=yes; shift; fi
die() { echo "compare.sh: $*" >&2; exit 2; }
[ $# = 1 ] || die "usage: compare.sh [--record] ORIGINALS (a folder with scorer.py and the answers' .c files; see the top of this script)"
SRC=$(cd "$1" && pwd) || die "no folder $1"
KOTH=${KOTH:-koth}
PYTHON2=${PYTHON2:-python2}
"$PYTHON2" -c 'print 2' >/dev/null 2>&1 || die "$PYTHON2 does not run Python 2 (the scorer is Python 2): install it, or set PYTHON2=/path/to/python2.7"
for t in gcc python3 node sha256sum; do
  command -v "$t" >/dev/null || die "$t is not installed; it is needed to run the scorer or a bot"
done
command -v "$KOTH" >/dev/null || die "koth not found (set KOTH=/path/to/koth)"
(cd "$SRC" && sha256sum --quiet -c "$HERE/originals.sha256") || die "the originals in $SRC differ from the ones compared (originals.sha256)"

W=${KOTH_COMPARE_DIR:-$(mktemp -d)}
echo "work folder: $W" >&2
rm -rf "$W/exe" "$W/empty" && mkdir -p "$W/exe" "$W/empty"
cp "$SRC/scorer.py" "$W/"
ANSWERS=(angel devil titfortat mistrust antihandshake)
for b in "${ANSWERS[@]}"; do gcc -O2 -o "$W/exe/$b" "$SRC/$b.c"; done
gcc -O2 -o "$W/exe/mine-defector" "$GAME/bots/defector.c"
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$GAME/bots/cooperator.py" > "$W/exe/mine-cooperator"
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$GAME/bots/grudger.py" > "$W/exe/mine-grudger"
printf '#!/bin/sh\nexec node %s "$@"\n' "$GAME/bots/mirror.js" > "$W/exe/mine-mirror"
chmod +x "$W"/exe/mine-*
BOTS=("${ANSWERS[@]}" mine-cooperator mine-defector mine-grudger mine-mirror)
file() { case $1 in mine-*) ls "$GAME"/bots/"${1#mine-}".* ;; *) echo "$SRC/$1.c" ;; esac; }
cd "$W"
: > pairs.txt
for a in "${BOTS[@]}"; do for b in "${BOTS[@]}"; do echo "$a $b" >> pairs.txt; done; done

echo "running the original scorer (81 ordered pairs)..." >&2
cat > run-pairs.py <<'EOF'
import os, sys
pairs = [l.split() for l in sys.stdin if l.strip()]
sys.argv = ['scorer.py', 'empty/']
g = {'__name__': 'scorer'}
real = sys.stdout
sys.stdout = open(os.devnull, 'w')
try:
    execfile('scorer.py', g)
except ValueError:
    pass  # max() over no warriors, after every function is defined
sys.stdout = real
for a, b in pairs:
    s1, s2 = g['runGame']('exe/' + a, 'exe/' + b)
    print a, b, s1, s2
EOF
"$PYTHON2" run-pairs.py < pairs.txt > scorer-results.txt

echo "running koth on the same pairs..." >&2
: > koth-results.txt
while read -r a b; do
  "$KOTH" match --game "$GAME" --seed 1 --json "$(file "$a")" "$(file "$b")" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin); o = sorted(d['outcomes'], key=lambda o: o['seat'])
print('$a', '$b', int(o[0]['score']), int(o[1]['score']), d['ended_by']['kind'], o[0]['invalid_moves'] + o[1]['invalid_moves'])
" >> koth-results.txt
done < pairs.txt

if [ $RECORD = yes ]; then
  { echo "# The original 1P5 scorer's runGame (Python 2), recorded $(date -u +%F) by compare.sh: SEAT0 SEAT1 SCORE0 SCORE1 per ordered pair; see ../ORIGIN.md"
    cat scorer-results.txt; } > "$HERE/scorer-results.txt"
  { echo "# koth match --game external-games/prisoners --seed 1 --json SEAT0 SEAT1, recorded $(date -u +%F) by compare.sh: SEAT0 SEAT1 SCORE0 SCORE1 ENDED_BY INVALID_ANSWERS; see ../ORIGIN.md"
    cat koth-results.txt; } > "$HERE/koth-results.txt"
fi

python3 - <<'EOF'
import sys
orig = {tuple(l.split()[:2]): tuple(l.split()[2:4]) for l in open('scorer-results.txt')}
same = total = 0
for l in open('koth-results.txt'):
    w = l.split()
    total += 1
    if orig.get((w[0], w[1])) == (w[2], w[3]):
        same += 1
    else:
        print('differs: %s against %s: the scorer %s, koth %s' % (w[0], w[1], orig.get((w[0], w[1])), (w[2], w[3])))
print('koth agrees with the original scorer on %d of %d ordered pairs' % (same, total))
sys.exit(0 if same == total == len(orig) else 1)
EOF
