# Try to read secrets; print what each attempt gave. argv[1..]: paths.
import sys
for p in sys.argv[1:]:
    try:
        print("%s: READ %s" % (p, open(p, "rb").read(4096)))
    except OSError as e:
        print("%s: errno=%d" % (p, e.errno))
