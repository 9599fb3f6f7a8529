# Rock Paper Scissors Lizard Spock bot: plays the five hands in turn,
# starting from its seat (so two cyclers do not mirror each other).
import sys

HANDS = "RPSLK"
for line in sys.stdin:
    rnd, rounds, seat = (int(x) for x in line.split()[:3])
    print(HANDS[(rnd + seat) % 5], flush=True)
