# Target bot that looks for other bots' files before it plays: walks every
# folder given as an argument (after SECRET=<text>), reads every file it can,
# and reports on stderr what it could list and whether any file held the
# secret. Then it stays still every turn.
import os, sys

secret = sys.argv[1].split("=", 1)[1].encode()
for top in sys.argv[2:]:
    listed, read, found = 0, 0, []
    # A file's path, guessed or known: read it straight.
    try:
        with open(top, "rb") as f:
            read += 1
            if secret in f.read(1 << 24):
                found.append(top)
    except OSError:
        pass
    try:
        for root, dirs, files in os.walk(top, onerror=lambda e: print(f"{top}: cannot list {e.filename}: errno={e.errno}", file=sys.stderr)):
            listed += len(dirs) + len(files)
            for name in files:
                path = os.path.join(root, name)
                try:
                    with open(path, "rb") as f:
                        data = f.read(1 << 24)
                    read += 1
                    if secret in data:
                        found.append(path)
                except OSError:
                    pass
    except OSError as e:
        print(f"{top}: errno={e.errno}", file=sys.stderr)
    print(f"{top}: listed={listed} read={read} found={len(found)} {found}", file=sys.stderr, flush=True)
for line in sys.stdin:
    print(2, flush=True)
