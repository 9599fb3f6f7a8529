#!/bin/bash
# Plays Grid-Routing Battle's original controller and koth on the same
# line-ups and prints where they agree: every line-up of 3, of 4 and of all
# 6 of 6 bots (the 3 deterministic answers compared in ../ORIGIN.md and
# koth's 3 in ../bots/), and koth's 3 in two more seat orders: 38 line-ups,
# one round each, seats in the order listed, seed 1.
#
#   compare.sh [--record] [ORIGINALS]
#
# ORIGINALS is the controller's repository: a folder holding a checkout of
# it, or a git URL to clone (default https://github.com/iatorm/grid-routing-battle,
# which needs the network). Either way the commit is pinned (PIN below) and
# every file used is checked against its SHA-256 before anything runs. The
# original code stays outside koth's repository: it is copied into a
# scratch folder (KOTH_COMPARE_DIR, default a new mktemp -d), built there
# and played from there.
#
# The original controller draws its random numbers (each bot's order of the
# others, the scoring's searches) from Python's `random`, unseeded. It is
# run unmodified, from a copy, after `random.seed(1)` in the same
# interpreter (runpy), so that its draws are those koth's referee makes
# with `--seed 1`.
#
# It needs: git, python3, javac/java, node, gcc, sha256sum, and koth (KOTH,
# default `koth` on PATH) able to run `koth match` (root, or a delegated
# cgroup). About 5 minutes on 2 cores. Not run in CI (it needs the
# originals, which are not in the repository).
#
# Each original bot runs behind a tap (tap.py, written below) that logs its
# answers; every seat's answers, in the original controller and in koth's
# replay, are compared too (their number and a digest).
#
# With --record it writes out.txt, answers.txt and koth-results.txt of this
# folder.
# Exit status: 0 when koth agrees on every line-up, 1 when not, 2 on a setup
# error (a missing tool, a checksum that does not match).
set -euo pipefail

PIN=34c703b5c9576b8d21572d3739cd34c02f2894e2
URL=https://github.com/iatorm/grid-routing-battle
SEED=1
HERE=$(cd "$(dirname "$0")" && pwd)
GAME=$(dirname "$HERE")
RECORD=no
if [ "${1:-}" = --record ]; then RECORD=yes; shift; fi
SRC=${1:-$URL}
KOTH=${KOTH:-koth}

die() { echo "compare.sh: $*" >&2; exit 2; }
for t in git python3 javac java node gcc sha256sum; do
  command -v "$t" >/dev/null || die "$t is not installed; it is needed to build or run the original bots"
done
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
cd "$W/orig"
sha256sum --quiet -c "$HERE/originals.sha256" || die "the originals differ from the pinned ones (originals.sha256): not the same code"

# Build: the Java answers as the controller's README expects (class files
# beside the source), koth's C bot with gcc.
javac -d bots/checkpoint bots/checkpoint/Checkpoint.java
javac -d bots/watermelon bots/watermelon/Watermelon.java
mkdir -p mine/column mine/roof mine/breaker
cp "$GAME/bots/column.py" mine/column/
cp "$GAME/bots/roof.js" mine/roof/
gcc -O2 -o mine/breaker/breaker "$GAME/bots/breaker.c"

# A tap koth's comparison puts between the controller and each original
# bot: it passes every line through unchanged and logs the bot's answers,
# so that koth's replay can be compared answer for answer.
cat > "$W/tap.py" <<'TAP'
import subprocess, sys, threading
log = open(sys.argv[1], "w")
bot = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
def answers():
    for line in bot.stdout:
        log.write(line.decode().rstrip("\n") + "\n")
        log.flush()
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
relay = threading.Thread(target=answers)
relay.start()
try:
    for line in sys.stdin.buffer:
        bot.stdin.write(line)
        bot.stdin.flush()
    bot.stdin.close()
except BrokenPipeError:
    pass
relay.join()
sys.exit(bot.wait())
TAP

# The 6 bots: name, folder (under the originals), the controller's command,
# the file koth plays.
NAMES=(Checkpoint Explorer Watermelon column roof breaker)
DIRS=(bots/checkpoint bots/explorer bots/watermelon mine/column mine/roof mine/breaker)
CMDS=("java Checkpoint" "python3 explorer.py" "java Watermelon" "python3 column.py" "node roof.js" "./breaker")
FILES=(bots/checkpoint/Checkpoint.java bots/explorer/explorer.py bots/watermelon/Watermelon.java
       "$GAME/bots/column.py" "$GAME/bots/roof.js" "$GAME/bots/breaker.c")

# The line-ups: every 3 and every 4 of the 6, in index order, all 6, and
# koth's 3 in two more seat orders (tests/corpus.rs plays those 3 in CI).
LINEUPS=$(python3 -c '
import itertools
for k in (3, 4):
    for c in itertools.combinations(range(6), k):
        print(" ".join(map(str, c)))
print("0 1 2 3 4 5")
print("5 4 3")
print("4 5 3")')

: > out.txt
: > koth-results.txt
: > answers.txt
n=0
while read -r -a L; do
  n=$((n + 1))
  R="$W/runs/$n"
  mkdir -p "$R/bots"
  cp controller.py "$R/"
  : > "$R/bots.txt"
  files=()
  for i in "${L[@]}"; do
    cp -a "${DIRS[$i]}" "$R/bots/${NAMES[$i]}"
    printf '%s\n%s\n%s\n' "${NAMES[$i]}" "${NAMES[$i]}" "python3 $W/tap.py $R/answers-${#files[@]}.txt ${CMDS[$i]}" >> "$R/bots.txt"
    files+=("${FILES[$i]}")
  done
  echo "line-up $n: ${L[*]}" >&2
  (cd "$R" && python3 -c 'import random, runpy, sys
random.seed(int(sys.argv[1]))
sys.argv = ["controller.py", "1"]
runpy.run_path("controller.py", run_name="__main__")' "$SEED" > controller.log 2>&1) || true
  res=$(sed -n 's/^  Results: //p' "$R/controller.log")
  echo "${L[*]} : ${res:-FAILED}" >> out.txt
  "$KOTH" match --game "$GAME" --seed "$SEED" --json --replay "$R/koth.json" "${files[@]}" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin); o = sorted(d['outcomes'], key=lambda o: o['seat'])
print('${L[*]} :', ' '.join(str(int(x['score'])) for x in o), ':', d['turns'], d['ended_by']['kind'],
      ' '.join(x['status']['kind'] for x in o), sum(x['invalid_moves'] for x in o), sum(x['timeouts'] for x in o))
" >> koth-results.txt
  # Each seat's answers: how many and a digest of them, the controller's
  # (from the taps) then koth's (from the replay).
  python3 - "$R" "${L[*]}" >> answers.txt <<'EOF'
import hashlib, json, sys
run, lineup = sys.argv[1], sys.argv[2]
n = len(lineup.split())
def digest(answers):
    return "%d:%s" % (len(answers), hashlib.sha256("\n".join(answers).encode()).hexdigest()[:16])
orig = [digest(open("%s/answers-%d.txt" % (run, s)).read().splitlines()) for s in range(n)]
try:
    replay = json.load(open(run + "/koth.json"))
    mine = [[] for _ in range(n)]
    for t in replay["turns"]:
        for a in t.get("answers", []):
            mine[a["seat"]].append(a.get("answer", ""))
    koth = [digest(m) for m in mine]
except (OSError, ValueError, KeyError):
    koth = ["(none)"] * n
print(lineup, ":", " ".join(orig), ":", " ".join(koth))
EOF
done <<< "$LINEUPS"

if [ $RECORD = yes ]; then
  { echo "# the original controller (iatorm/grid-routing-battle $PIN, random.seed($SEED), 1 round) on each line-up: BOT-IDS : ITS 'Results:' LINE (bot ids: 0 Checkpoint, 1 Explorer, 2 Watermelon, 3 column.py, 4 roof.js, 5 breaker.c; seats in that order), recorded $(date -u +%F) by compare.sh; see ../ORIGIN.md"
    cat out.txt; } > "$HERE/out.txt"
  { echo "# koth match --game external-games/grid-routing --seed $SEED --json BOTS..., recorded $(date -u +%F) by compare.sh: BOT-IDS : SCORES : TURNS ENDED_BY STATUSES INVALID TIMEOUTS; see ../ORIGIN.md"
    cat koth-results.txt; } > "$HERE/koth-results.txt"
  { echo "# every seat's answers in the original controller (through a tap) and in koth's replay, on the line-ups of out.txt: BOT-IDS : ORIGINAL (COUNT:SHA256-PREFIX of the answers joined by newlines, a seat each) : KOTH (the same), recorded $(date -u +%F) by compare.sh; see ../ORIGIN.md"
    cat answers.txt; } > "$HERE/answers.txt"
fi

# Agreement: every seat's score, the controller's then koth's.
python3 - "${NAMES[@]}" <<'EOF'
import sys
names = sys.argv[1:]
def read(path):
    out = {}
    for line in open(path):
        parts = [p.strip() for p in line.split(":")]
        out[parts[0]] = parts[1].split()
    return out
orig, koth = read("out.txt"), read("koth-results.txt")
answers = {}
for line in open("answers.txt"):
    parts = [p.strip() for p in line.split(":", 1)[1].rsplit(" : ", 1)]
    answers[line.split(":")[0].strip()] = (parts[0].split(), parts[1].split())
same = compared = 0
for lineup, scores in orig.items():
    k = koth.get(lineup)
    a_orig, a_koth = answers.get(lineup, ([], ["(none)"]))
    compared += sum(int(d.split(":")[0]) for d in a_orig)
    who = ", ".join(names[int(i)] for i in lineup.split())
    if k == scores and a_orig == a_koth:
        same += 1
        continue
    if k != scores:
        print("differs: %s: the controller scores %s, koth %s" % (who, " ".join(scores), " ".join(k or ["(none)"])))
    for s, (x, y) in enumerate(zip(a_orig, a_koth)):
        if x != y:
            print("differs: %s: seat %d (%s) answered %s in the controller, %s in koth" % (who, s, names[int(lineup.split()[s])], x, y))
print("koth agrees with the original controller on %d of %d line-ups (scores, and every seat's answers: %d answers)" % (same, len(orig), compared))
sys.exit(0 if same == len(orig) == len(koth) else 1)
EOF
