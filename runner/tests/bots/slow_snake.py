# Snake over stdio: says its name, then takes 300 ms per move (the limit is 200).
import sys, time
print("slow_snake", flush=True)
for line in sys.stdin:
    if line.strip() in ("WIN", "LOSS", "TIE"):
        break
    time.sleep(0.3)
    print("u", flush=True)
