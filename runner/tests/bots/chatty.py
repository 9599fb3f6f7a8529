# Target: before each answer ("2" = stay) writes which request this is on
# stderr, so a test can check that each turn's stderr is filed under it.
import sys
n = 0
for line in sys.stdin:
    n += 1
    print(f"thinking about request {n}", file=sys.stderr, flush=True)
    print("2", flush=True)
