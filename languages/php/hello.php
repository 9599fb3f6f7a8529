<?php
// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
fwrite(STDERR, "hello from php\n");
while (($line = fgets(STDIN)) !== false) {
    if (rtrim($line, "\r\n") === "M") {
        fwrite(STDOUT, "0 0 0 0\n");
        fflush(STDOUT);
    }
}
