# Open files until the limit.
n = 0
keep = []
try:
    while True:
        keep.append(open("/dev/null"))
        n += 1
except OSError as e:
    print("fds=%d errno=%d" % (n, e.errno), flush=True)
