# Leave a daemon behind: setsid and double fork, then exit at once.
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            open("/tmp/daemon-alive", "w").close()
            time.sleep(1)
    os._exit(0)
print("parent leaving", flush=True)
