# Fork until the kernel refuses; children wait forever.
import os, signal
n = 0
while True:
    try:
        pid = os.fork()
    except OSError as e:
        print("forks=%d errno=%d" % (n, e.errno), flush=True)
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    n += 1
