# Try to kill everything in reach: every pid the host has (argv[2:], read
# from the host's /proc when the test started) and the first 1024 (its own
# namespace's), pid 1, the supervisor's pid (argv[1], a host pid), kill(-1),
# then the parent.
import os, signal, sys
def try_kill(pid, sig):
    try:
        os.kill(pid, sig)
        return 0
    except OSError:
        return -1
pids = set(range(1, 1025)) | {int(a) for a in sys.argv[1:]}
visible = sum(1 for pid in pids if pid != os.getpid() and try_kill(pid, 0) == 0)
print("visible=%d kill1=%d killhost=%d" % (visible, try_kill(1, 9), try_kill(int(sys.argv[1]), 9)))
sys.stdout.flush()
try_kill(-1, 9)
print("survived kill(-1)", flush=True)
try_kill(os.getppid(), 9)
print("survived killing the parent", flush=True)
