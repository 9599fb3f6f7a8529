# Try every way out. argv: tcp_port udp_port unix_path... -- abstract_name
import socket, sys
def report(what, f):
    try:
        f()
        print("%s: ok" % what)
    except OSError as e:
        print("%s: errno=%d" % (what, e.errno))
tcp, udp = int(sys.argv[1]), int(sys.argv[2])
report("tcp connect host", lambda: socket.create_connection(("127.0.0.1", tcp), timeout=2))
report("tcp bind", lambda: socket.socket().bind(("0.0.0.0", 5555)))
report("udp send host", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"hi", ("127.0.0.1", udp)))
report("raw icmp socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
report("packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 3))
report("vsock socket", lambda: socket.socket(40, socket.SOCK_STREAM))
report("crypto api socket", lambda: socket.socket(38, socket.SOCK_SEQPACKET))
rest = sys.argv[3:]
sep = rest.index("--")
for path in rest[:sep]:
    report("unix connect %s" % path, lambda: socket.socket(socket.AF_UNIX).connect(path))
for name in rest[sep + 1:]:
    report("abstract unix connect", lambda: socket.socket(socket.AF_UNIX).connect("\0" + name))
print("interfaces=%d" % (len(open("/proc/net/dev").read().splitlines()) - 2))
