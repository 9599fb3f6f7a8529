# A Caveman Duels bot of koth's own, written for this corpus (no answer's
# code): it knows a duel's first turn by there being no argument at all, as
# the original controller asked it, and then pokes as soon as its stick is
# sharp. So it tells the two apart where a careless referee would not: with
# no argument it sharpens and wins against a sharpener on turn 2; given one
# empty argument (which the controller never passed) it blocks first and
# wins only on turn 3 (tests/corpus.rs counts the turns).
import sys

if len(sys.argv) < 2:
    move = "S"  # a duel's first turn: no argument
elif sys.argv[1] == "":
    move = "B"  # one empty argument: not how a duel starts
else:
    mine = sys.argv[1].split(",")[0]
    move = "P" if mine.endswith("S") else "S"
print(move)
