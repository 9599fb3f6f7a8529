# A Target bot that keeps data in its folder between matches: it counts
# its matches in count.txt and says the count on stderr ("match N").
# Arguments, for the persistence tests:
#   fill=N    also writes N bytes to big.bin (past a small quota)
#   plant     plants what a hostile bot would: a symbolic link to
#             /etc/passwd, one to /proc/self/root (every folder of the
#             box, another bot's included, were it visible) and one to
#             the parent folder
#   hardlink  plants a hard link to its own count
# Every match it also says what it finds of an earlier match's plants.
import os, sys

args = sys.argv[1:]
try:
    with open("count.txt") as f:
        n = int(f.read().strip() or "0")
except FileNotFoundError:
    n = 0
n += 1
with open("count.txt.new", "w") as f:
    f.write(str(n))
os.replace("count.txt.new", "count.txt")
print(f"match {n}", file=sys.stderr, flush=True)
for name in ["passwd", "root", "up", "count.link"]:
    if os.path.lexists(name):
        kind = "link" if os.path.islink(name) else "file"
        try:
            with open(name, "rb") as f:
                peek = f.read(64)
        except OSError as e:
            peek = repr(e).encode()
        print(f"found {name} ({kind}): {peek[:20]!r}", file=sys.stderr, flush=True)
    else:
        print(f"no {name}", file=sys.stderr, flush=True)
for a in args:
    if a.startswith("fill="):
        with open("big.bin", "wb") as f:
            f.write(b"x" * int(a[5:]))
    if a == "plant":
        for name, target in [("passwd", "/etc/passwd"), ("root", "/proc/self/root"), ("up", "..")]:
            if os.path.lexists(name):
                os.remove(name)
            os.symlink(target, name)
    if a == "hardlink":
        if os.path.lexists("count.link"):
            os.remove("count.link")
        os.link("count.txt", "count.link")
print(f"ready", file=sys.stderr, flush=True)
for line in sys.stdin:
    print(0, flush=True)
