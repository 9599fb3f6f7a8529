# Try to write each path in argv; print what each attempt gave.
import sys
for p in sys.argv[1:]:
    try:
        with open(p, "w") as f:
            f.write("pwned")
        print("%s: WROTE" % p)
    except OSError as e:
        print("%s: errno=%d" % (p, e.errno))
