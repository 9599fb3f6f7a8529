# A process per turn (Slime, Linkage): exits with code 3 without answering.
import sys

sys.exit(3)
