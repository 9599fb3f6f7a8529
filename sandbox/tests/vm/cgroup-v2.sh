#!/usr/bin/env bash
# Run the sandbox's integration tests on a cgroup v2 host.
#
# CI machines mount the cgroup controllers on v1, so the v2 backend cannot be
# tested on them directly. This script boots Debian's stock kernel in a VM
# (KVM when /dev/kvm exists) with only cgroup v2 mounted and every controller
# on it, shares this machine's root filesystem with the VM over 9p, and runs
# the already-built test binaries there with KOTH_CGROUP=v2 and CI=true.
# The tests start inside a child cgroup that holds processes, so the v2
# backend's "move ourselves into a koth-runner leaf" path runs too.
#
# Usage: sandbox/tests/vm/cgroup-v2.sh        (as root; installs what it needs)
#
# KOTH_VM_TESTS="binary ..." runs those test binaries instead of asking cargo
# for the sandbox's.
# KOTH_VM_RUN="command" runs that command in the VM (through sh, in the
# workspace, with the same environment) instead of the tests: to measure
# on a v2 kernel, e.g. KOTH_VM_RUN="target/release/koth sandbox bench".
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
workspace="$(cd "$here/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$workspace/target}"
vm="$target/vm-cgroup-v2"
mkdir -p "$vm"

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -x /usr/bin/busybox ] && /usr/bin/busybox --list | grep -qx switch_root || need+=(busybox-static)
if [ "${#need[@]}" -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# Debian's stock kernel, unpacked (not installed: no hooks run on this machine).
if ! ls "$vm"/kernel/boot/vmlinuz-* >/dev/null 2>&1; then
    pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
    [ -n "$pkg" ] || { apt-get update -qq; pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}'); }
    (cd "$vm" && rm -f linux-image-*.deb && apt-get download "$pkg" 2>/dev/null && dpkg -x linux-image-*.deb kernel && rm -f linux-image-*.deb)
fi
kver=$(ls "$vm/kernel/lib/modules" | head -1)
vmlinuz="$vm/kernel/boot/vmlinuz-$kver"

# The test binaries, built on the host: KOTH_VM_TESTS names them (.ci/run
# does, since a cargo started here would wait for the build lock while
# other builds run beside the VM), or cargo lists them.
tests="${KOTH_VM_TESTS:-}"
[ -n "$tests" ] || tests=$(cd "$workspace" && cargo test -p koth-sandbox --tests --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])')
[ -n "$tests" ] || { echo "no test binaries were built" >&2; exit 1; }

# KOTH_VM_ACCEL=tcg|kvm. The default is TCG: these machines are themselves
# virtual machines, and a nested KVM guest hangs at boot there.
accel_name="${KOTH_VM_ACCEL:-tcg}"
# The emulated CPU: Nehalem (SSE4.2, no AVX) unless KOTH_VM_CPU says
# otherwise; nothing koth tests needs more. (It replaced `-cpu max` in the
# belief that QEMU's AVX emulation crashed javac; that was not the cause.)
#
# TCG runs both vCPUs on one host thread, taking turns (thread=single),
# unless KOTH_VM_TCG_THREAD=multi. Under multi-threaded TCG (QEMU 7.2,
# Debian 12's) a JVM's JIT-compiled code goes wrong: HotSpot rewrites code
# that its other threads are running (inline caches, methods made not
# entrant), and in CI javac on the host's root died with SIGILL in
# JIT-compiled code. A Java program made to do that (40 interfaces each
# given a second implementor while three threads call through them, 40-60 s)
# went wrong in 7 runs of 13 under thread=multi with Nehalem
# (IncompatibleClassChangeError, which correct code cannot raise, and once
# SIGSEGV in C1-compiled code), in 0 of 12 under thread=single, in 0 of 4
# under thread=multi with the JIT off (-Xint), and in 0 of 6 on the host.
# (javac on a small file: 0 of 7 under multi, 0 of 4 under single; the
# CI crash is rarer than that.) With thread=single no vCPU runs while
# another writes code. No cost showed: on two cores busy with other work
# (load average 4-7) the whole stage took 400 s with thread=single and
# 415 s with thread=multi, one run each (2026-11-26).
case "$accel_name" in
    kvm) accel="-enable-kvm -cpu host" ;;
    *) accel="-accel tcg,thread=${KOTH_VM_TCG_THREAD:-single} -cpu ${KOTH_VM_CPU:-Nehalem}" ;;
esac
# Emulation (TCG) runs programs far slower than the host: the tests scale
# their time limits by this factor.
slowdown=1
[ "$accel_name" = tcg ] && slowdown=25

# What stage 2 runs instead of the tests, if anything.
rm -f "$vm/run-instead.sh"
[ -z "${KOTH_VM_RUN:-}" ] || printf '%s\n' "$KOTH_VM_RUN" > "$vm/run-instead.sh"

# Stage 2 runs on the shared root after switch_root.
cat > "$vm/stage2.sh" <<STAGE2
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t devtmpfs dev /dev
# Shared memory, as every host has it (the rootless tests leave a secret
# there that a box must not see).
mkdir -p /dev/shm
mount -t tmpfs -o mode=1777 shm /dev/shm
# Private scratch folders (the tests bind sockets there, which 9p cannot
# hold); a checkout living under one of them is bound back on top.
mount -t tmpfs run /run
mkdir /run/koth-ws
mount --bind "$workspace" /run/koth-ws
mount -t tmpfs tmp /tmp
mount -t tmpfs vartmp /var/tmp
# The rootless tests' user folders (sandbox/tests/common/delegate.rs) live
# here and hold the user's sockets.
mount -t tmpfs varcache /var/cache
if [ ! -d "$workspace" ]; then
    mkdir -p "$workspace"
    mount --bind /run/koth-ws "$workspace"
fi
echo "+memory +pids +cpu +cpuset" > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/ci
echo \$\$ > /sys/fs/cgroup/ci/cgroup.procs
echo "vm: kernel \$(uname -r), cgroup: \$(cat /proc/self/cgroup), controllers: \$(cat /sys/fs/cgroup/cgroup.controllers)"
export CI=true KOTH_CGROUP=v2 KOTH_TEST_SLOWDOWN=\${KOTH_TEST_SLOWDOWN:-$slowdown} HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd "$workspace"
rc=0
if [ -f "$vm/run-instead.sh" ]; then
    echo "vm: running \$(cat "$vm/run-instead.sh")"
    sh "$vm/run-instead.sh" || rc=1
else
    for t in $(echo $tests); do
        echo "vm: running \$t"
        "\$t" --test-threads=2 || rc=1
    done
fi
echo "KOTH-VM-RESULT rc=\$rc"
sync
STAGE2
chmod +x "$vm/stage2.sh"

# The initramfs: busybox, the 9p and virtio modules, an init that mounts the
# host's root over 9p and switches to it.
rm -rf "$vm/initramfs" && mkdir -p "$vm/initramfs"/{bin,dev,proc,sys,newroot,modules}
cp /usr/bin/busybox "$vm/initramfs/bin/busybox"
mknod "$vm/initramfs/dev/console" c 5 1
mods="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p"
for m in $mods; do
    f=$(find "$vm/kernel/lib/modules/$kver" -name "$m.ko*" | head -1)
    [ -n "$f" ] || { echo "module $m not found in $kver" >&2; exit 1; }
    cp "$f" "$vm/initramfs/modules/"
done
cat > "$vm/initramfs/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs dev /dev
exec >/dev/console 2>&1 </dev/console
for m in $mods; do insmod /modules/\$m.ko || echo "insmod \$m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 hostroot /newroot || { echo "KOTH-VM-RESULT rc=98"; poweroff -f; }
umount /proc
exec switch_root /newroot /bin/sh -c '$vm/stage2.sh; exec /usr/bin/busybox poweroff -f'
INIT
chmod +x "$vm/initramfs/init"
(cd "$vm/initramfs" && find . | /usr/bin/busybox cpio -o -H newc 2>/dev/null | gzip -1 > "$vm/initramfs.cpio.gz")

echo "booting $kver ($accel_name); the VM's console follows"
log="$vm/console.log"
timeout 2700 qemu-system-x86_64 $accel -m 6G -smp 2 -nographic -no-reboot \
    -kernel "$vmlinuz" -initrd "$vm/initramfs.cpio.gz" \
    -append "console=ttyS0 loglevel=4 panic=-1 rdinit=/init" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,id=hostroot \
    2>&1 | tee "$log" | grep -v '^\s*$'
result=$(grep -ao 'KOTH-VM-RESULT rc=[0-9]*' "$log" | tail -1)
echo "$result"
[ "$result" = "KOTH-VM-RESULT rc=0" ]
