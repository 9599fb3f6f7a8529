# Write into sys.argv[1] until an error; sys.argv[2]: "one" file or "many".
import os, sys
folder, mode = sys.argv[1], sys.argv[2]
buf = b"x" * 65536
total = 0
i = 0
try:
    while True:
        with open(os.path.join(folder, "fill-%d" % (0 if mode == "one" else i)), "ab") as f:
            for _ in range(16 if mode == "many" else 1 << 30):
                f.write(buf)
                f.flush()
                total += len(buf)
        i += 1
except OSError as e:
    print("bytes=%d errno=%d" % (total, e.errno), flush=True)
