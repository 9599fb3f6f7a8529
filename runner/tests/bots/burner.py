# Burns CPU for 45 ms on every request, then stays put (Target).
import sys, time
for line in sys.stdin:
    end = time.process_time() + 0.045
    while time.process_time() < end:
        pass
    print(2, flush=True)
