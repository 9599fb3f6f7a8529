# A Slime bot for the bot-data tests (tests/bot_data.rs, tests/cli_replay.rs).
# It counts the matches it has played in count.txt (asked once a match: four
# seats, four turns), says the count and whether the links a "plant" bot
# leaves are there on stderr, then does what MODE says, and plays the
# count-th spread around its slime: what it plays depends on its data.
# The tests set MODE by replacing the line below: "count" (nothing more),
# "hoard" (5000 bytes from its second match on: past a 4096-byte quota) or
# "plant" (symbolic links to /etc/passwd, the box's root, the folder above).
import os, sys
MODE = "count"
arg = sys.argv[1].split(",")
me, rows = arg[0], arg[1:]
try:
    n = int(open("count.txt").read())
except FileNotFoundError:
    n = 0
n += 1
open("count.txt", "w").write(str(n))
print(f"match {n}", file=sys.stderr)
for name in ["passwd", "root", "up"]:
    print(("found " if os.path.lexists(name) else "no ") + name, file=sys.stderr)
if MODE == "hoard" and n >= 2:
    open("big.bin", "wb").write(b"x" * 5000)
if MODE == "plant":
    for name, target in [("passwd", "/etc/passwd"), ("root", "/proc/self/root"), ("up", "..")]:
        if not os.path.lexists(name):
            os.symlink(target, name)
moves = []
for r, row in enumerate(rows):
    for c, x in enumerate(row):
        if x == me:
            for a in range(r - 1, r + 2):
                for b in range(c - 1, c + 2):
                    if 0 <= a < len(rows) and 0 <= b < len(rows) and rows[a][b] == ".":
                        moves.append(f"{r} {c} {a} {b}")
print(moves[n % len(moves)] if moves else "0 0 0 0")
