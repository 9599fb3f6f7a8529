# Start threads until the kernel refuses.
import os, threading, time
n = 0
while True:
    try:
        threading.Thread(target=time.sleep, args=(1e6,), daemon=True).start()
    except RuntimeError:
        print("threads=%d errno=11" % n, flush=True)
        os._exit(0)
    n += 1
