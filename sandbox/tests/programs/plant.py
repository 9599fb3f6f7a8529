# Leave traps for the supervisor in the work folder.
import os
os.symlink("/etc/shadow", "out.txt")
os.symlink("/", "rootlink")
os.symlink("/etc", "etclink")
os.mkfifo("fifo")
open("real", "w").write("mine")
os.link("real", "hard")
try:
    os.link("/etc/passwd", "hard2")
    print("hard link to /etc/passwd: 0")
except OSError:
    print("hard link to /etc/passwd: -1")
os.mkdir("dir")
