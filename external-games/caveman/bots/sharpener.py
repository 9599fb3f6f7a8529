# Sharpens five times, then pokes with its sword until the duel is won.
# Written for koth's corpus (not an original answer of the challenge).
import sys

history = sys.argv[1] if len(sys.argv) > 1 else ""
mine = history.split(",")[0] if history else ""
sharpness = 0
for m in mine:
    sharpness += 1 if m == "S" else -1 if m == "P" and sharpness > 0 else 0
print("P" if sharpness >= 5 else "S")
