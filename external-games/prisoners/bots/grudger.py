# Clams up until the history holds any betrayal of it (an R anywhere), then
# tells all. Written for koth's corpus (not an original answer). It reads
# the whole history, so it sees what the original scorer handed the second
# prisoner.
import sys

history = sys.argv[1] if len(sys.argv) > 1 else ""
print("t" if "R" in history else "c")
