# A per-turn bot as many original King-of-the-Hill bots were written: no
# argument means the first turn; an argument it does not expect (koth's
# one empty argument, before argv lists) crashes it.
import sys

args = sys.argv[1:]
if not args:
    print("hello")
elif args == ["--stdin"]:
    lines = sys.stdin.read().split("\n")
    print(sum(int(x) for x in lines[1].split()))
elif args == ["pair"]:
    print("left")
    print("right")
elif args == ["list"]:
    print("a\nb\nc\nEND")
else:
    print(sum(int(a) for a in args))
