# Answers every request after sleeping argv[1] milliseconds; argv[2] is the
# answer (Target: "2" = stay; Flit: "0 0 0 0" = pass). Flit's "M" and
# Target's position lines are requests; Flit's updates are not.
import sys, time
delay, answer = float(sys.argv[1]) / 1000, sys.argv[2]
for line in sys.stdin:
    f = line.split()
    if f == ["M"] or len(f) >= 2 and len(f) != 3:
        time.sleep(delay)
        print(answer, flush=True)
