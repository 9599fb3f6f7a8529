# Try to trace: a child of ours, pid 1, and ourselves (through libc).
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_TRACEME, PTRACE_ATTACH = 0, 16
c = os.fork()
if c == 0:
    time.sleep(1e6)
for what, req, pid in (("attach child", PTRACE_ATTACH, c), ("attach pid 1", PTRACE_ATTACH, 1), ("traceme", PTRACE_TRACEME, 0)):
    r = libc.ptrace(req, pid, None, None)
    print("%s: %s errno=%d" % (what, "ok" if r == 0 else "denied", ctypes.get_errno()))
os.kill(c, signal.SIGKILL)
