#!/usr/bin/env bash
# Which of the runner container's capabilities koth's sandbox needs, on this
# host: boxes are run in a container of koth's image, under Docker's
# default seccomp profile, with the set that docker-compose.yml gives the
# runner, then with each capability removed in
# turn, and the script prints what fails without it. (README.md, "Privileges
# of the runner container".) Each probe: a box with loopback (Snake's) that
# runs a program; a program over a 1 s CPU limit, which must be stopped well before the 5 s
# wall limit; a file put into the bot's folder, read and appended to.
# Needs Docker and koth's image (docker-compose build runner).
set -uo pipefail
IMAGE=${KOTH_IMAGE:-koth:latest}
CAPS=(SYS_ADMIN SYS_CHROOT NET_ADMIN SETUID SETGID SETPCAP CHOWN DAC_OVERRIDE FOWNER KILL SYS_NICE)
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "no image $IMAGE: run docker-compose build runner first" >&2; exit 1; }

probe() {
    local args=(--rm --cap-drop ALL -e KOTH_SANDBOX=1)
    for c in "$@"; do args+=(--cap-add "$c"); done
    docker run "${args[@]}" "$IMAGE" sh -c '
        out=$(koth sandbox run --loopback-ports 4040 -- /bin/sh -c "echo ok" 2>&1) || { echo "a box fails: $(echo "$out" | tail -1)"; exit 0; }
        start=$(date +%s%N)
        koth sandbox run --time 1s --wall-time 5s -- /bin/sh -c "while :; do :; done" >/dev/null 2>&1
        took=$(( ($(date +%s%N) - start) / 1000000 ))
        [ "$took" -lt 2500 ] || { echo "a program over its 1 s CPU limit ran on for ${took} ms"; exit 0; }
        echo hello > /tmp/in
        out=$(koth sandbox run --file in.txt=/tmp/in -- /bin/sh -c "cat in.txt && echo more >> in.txt" 2>&1) \
            || { echo "files in the folder fail: $(echo "$out" | tail -1)"; exit 0; }
        echo "everything works"' 2>&1 | tail -1
}

printf '%-16s %s\n' "capabilities" "result"
printf '%-16s %s\n' "all ${#CAPS[@]}" "$(probe "${CAPS[@]}")"
for drop in "${CAPS[@]}"; do
    rest=()
    for c in "${CAPS[@]}"; do [ "$c" = "$drop" ] || rest+=("$c"); done
    printf '%-16s %s\n' "without $drop" "$(probe "${rest[@]}")"
done
