#!/bin/bash
# Plays Speed Clue's original contest server (Java, sadakatsu/SpeedClueContest
# at PIN, built from its sources and run unmodified) and koth on the same
# games and prints where they agree. The server plays every line-up of 3
# and of 4 of four entries (koth's deducer.py and plodder.py, twice each
# under other identifiers), every seat order of each, GAMES games an order
# (48 orders). Its shuffles (the solution, the deal, java.util.Collections
# .shuffle) are unseeded: each AI runs behind a tap (tap.py) that logs every
# message, so each game's deal is read back from its `reset` messages (the
# solution is the three cards nobody holds) and koth plays the same deal
# (settings.deal) with the same bots in the same seats. Compared, a game
# each: the winner's seat and the rounds (the server's matchTranscripts.txt),
# and every seat's answers (their number and a digest; the tap's log, and
# koth's replay less its last turn, the `done` koth sends at each game's
# end where the server sends it once, at the tournament's).
#
#   compare.sh [--record] [ORIGINALS]
#
# ORIGINALS is the server's repository: a folder holding a checkout of it,
# or a git URL (default https://github.com/sadakatsu/SpeedClueContest, which
# needs the network); the commit is pinned and every file used is checked
# against originals.sha256 before anything runs. The original code stays
# outside koth's repository: it is copied into a scratch folder
# (KOTH_COMPARE_DIR, default a new mktemp -d), built and run there.
#
# It needs git, javac/java (17), python3, sha256sum and koth (KOTH, default
# `koth` on PATH) able to run `koth match` (root, or a delegated cgroup).
# Not run in CI. With --record it writes games.txt of this folder.
# Exit status: 0 when koth agrees on every game, 1 when not, 2 on a setup
# error.
set -euo pipefail

PIN=f670e4e594b35e4a5111492dde31414429865ade
URL=https://github.com/sadakatsu/SpeedClueContest
GAMES=${GAMES:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
GAME=$(dirname "$HERE")
RECORD=no
if [ "${1:-}" = --record ]; then RECORD=yes; shift; fi
SRC=${1:-$URL}
KOTH=${KOTH:-koth}

die() { echo "compare.sh: $*" >&2; exit 2; }
for t in git python3 javac java sha256sum; do
  command -v "$t" >/dev/null || die "$t is not installed"
done
command -v "$KOTH" >/dev/null || die "koth not found (set KOTH=/path/to/koth)"

W=${KOTH_COMPARE_DIR:-$(mktemp -d)}
mkdir -p "$W"
echo "work folder: $W" >&2
rm -rf "$W/orig" "$W/run" "$W/koth"
if [ -d "$SRC" ] && ! git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  cp -a "$SRC" "$W/orig"
else
  git clone -q "$SRC" "$W/orig" || die "cloning $SRC failed"
  git -C "$W/orig" checkout -q "$PIN" || die "commit $PIN not found in $SRC"
fi
(cd "$W/orig" && sha256sum --quiet -c "$HERE/originals.sha256") || die "the originals differ from the pinned files (originals.sha256)"

# The server, from its sources.
mkdir -p "$W/run/classes" "$W/run/taps"
javac -nowarn -d "$W/run/classes" $(find "$W/orig/core/code" -name '*.java') 2>/dev/null || die "building the server failed"
cp "$HERE/tap.py" "$GAME/bots/deducer.py" "$GAME/bots/plodder.py" "$W/run/"
cat > "$W/run/entries.txt" <<ENTRIES
python3 $W/run/tap.py {deducer-a} %% python3 $W/run/deducer.py
python3 $W/run/tap.py {plodder-a} %% python3 $W/run/plodder.py
python3 $W/run/tap.py {deducer-b} %% python3 $W/run/deducer.py
python3 $W/run/tap.py {plodder-b} %% python3 $W/run/plodder.py
ENTRIES
(cd "$W/run" && TAP_DIR="$W/run/taps" java -cp classes com.sadakatsu.clue.contestserver.ContestServer entries.txt "$GAMES" > server.out 2>&1) \
  || die "the server failed: $(tail -5 "$W/run/server.out")"

# Each game: its deal from the taps, the server's result, koth's.
python3 - "$W" "$GAME" "$KOTH" "$RECORD" "$HERE" <<'PY'
import hashlib, json, os, shutil, subprocess, sys
W, GAME, KOTH, RECORD, HERE = sys.argv[1:]
CARDS = "Gr Mu Pe Pl Sc Wh Ca Kn Pi Re Ro Wr Ba Bi Co Di Ha Ki Li Lo St".split()
# The server's games in order: players (identifiers, in seat order), winner, rounds.
games = []
for line in open(f"{W}/run/matchTranscripts.txt"):
    f = line.strip().split(",")
    n = int(f[0])
    games.append({"players": [f[3 + 4 * i] for i in range(n)], "winner": int(f[1]), "rounds": int(f[2])})
# Each identifier's messages, cut into its games at each `reset`.
per_ident = {}
for name in os.listdir(f"{W}/run/taps"):
    ident = name[:-4]
    cut = []
    for line in open(f"{W}/run/taps/{name}"):
        way, text = json.loads(line)
        if way == ">" and text.lower().startswith("reset"):
            cut.append({"reset": text, "answers": []})
        elif way == "<" and cut and not text.startswith(ident + " alive"):
            cut[-1]["answers"].append(text)
    per_ident[ident] = cut
def digest(answers):
    return "%d:%s" % (len(answers), hashlib.sha256("\n".join(answers).encode()).hexdigest()[:16])
seen = {i: 0 for i in per_ident}
rows, agree = [], 0
for k, g in enumerate(games):
    hands, original = [], []
    for seat, ident in enumerate(g["players"]):
        mine = per_ident[ident][seen[ident]]
        seen[ident] += 1
        words = mine["reset"].split()
        assert int(words[2]) == seat, (ident, mine["reset"])
        hands.append(" ".join(words[3:]))
        # The done/dead of the tournament's end is not a game's.
        original.append(digest([a for a in mine["answers"] if a != "dead"]))
    held = set(" ".join(hands).split())
    solution = " ".join(c for c in CARDS if c not in held)
    folder = f"{W}/koth/game-{k}"
    shutil.copytree(GAME, folder, ignore=shutil.ignore_patterns("original"))
    manifest = json.load(open(f"{folder}/game.json"))
    manifest["settings"]["deal"] = {"solution": solution, "hands": hands}
    json.dump(manifest, open(f"{folder}/game.json", "w"))
    bots = [f"{folder}/bots/{i.split('-')[0]}.py" for i in g["players"]]
    replay = f"{W}/koth/game-{k}.json"
    out = subprocess.run([KOTH, "match", "--game", folder, "--seed", "1", "--replay", replay] + bots, capture_output=True, text=True)
    r = json.load(open(replay))
    win = [e for t in r["turns"] for e in t["events"] if e["type"] == "winner"]
    kwinner, krounds = (win[0]["seat"], win[0]["rounds"]) if win else (None, None)
    answers = [[] for _ in g["players"]]
    for t in r["turns"][:-1]:
        for a in t["answers"]:
            answers[a["seat"]].append(a.get("answer", ""))
    kdigests = [digest(a) for a in answers]
    same = (kwinner, krounds, kdigests) == (g["winner"], g["rounds"], original)
    agree += same
    rows.append("%s : %s : %s : %d %d : %s : %d %s : %s" % (" ".join(g["players"]), solution, " / ".join(hands), g["winner"], g["rounds"], " ".join(original), kwinner if kwinner is not None else -1, krounds, " ".join(kdigests)))
    print(("agree  " if same else "DIFFER ") + rows[-1])
print(f"{agree} of {len(games)} games agree (winner, rounds and every seat's answers)")
if RECORD == "yes":
    with open(f"{HERE}/games.txt", "w") as f:
        f.write("# Speed Clue's original contest server (sadakatsu/SpeedClueContest at f670e4e, unmodified) and koth on the same deals: "
                "PLAYERS : SOLUTION : HANDS (seat order) : ORIGINAL WINNER-SEAT ROUNDS : ORIGINAL ANSWERS (COUNT:SHA256-PREFIX a seat) : "
                "KOTH WINNER ROUNDS : KOTH ANSWERS; recorded by compare.sh --record, see ../ORIGIN.md\n")
        f.write("\n".join(rows) + "\n")
sys.exit(0 if agree == len(games) else 1)
PY
