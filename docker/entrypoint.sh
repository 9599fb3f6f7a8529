#!/bin/sh
# Entry point of koth's containers.
#
# Services that run sandbox boxes (runner, images, sandbox-check) set
# KOTH_SANDBOX=1. The sandbox makes a cgroup per box under the container's
# own cgroup; Docker mounts the container's cgroups read-only (a flag of the
# bind mount, not of the cgroup filesystem), so make those mounts writable.
# This changes only the container's own view of its own subtree, and it
# needs CAP_SYS_ADMIN, which only those services have.
set -eu
if [ "${KOTH_SANDBOX:-0}" = 1 ]; then
    for m in $(awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/self/mounts); do
        mount -o remount,bind,rw "$m" || {
            echo "koth-entrypoint: cannot make $m writable; the container needs CAP_SYS_ADMIN, and no AppArmor profile that forbids mount (docker-default does: docs/operations.md, \"Privileges of the runner container\")" >&2
            exit 1
        }
    done
fi
exec "$@"
