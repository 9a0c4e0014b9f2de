"""Opens N keep-alive connections to HOST:PORT, makes one request on each, then holds them
idle; prints "held N" and waits for stdin to close (bench/http_server.sh measures the RSS)."""
import socket
import sys

host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
req = b"GET /hello HTTP/1.1\r\nhost: bench\r\n\r\n"
conns = []
for i in range(n):
    s = socket.create_connection((host, port))
    s.sendall(req)
    conns.append(s)
ok = 0
for s in conns:
    data = b""
    while b"Hello, World!" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    ok += b"Hello, World!" in data
print("held", ok, flush=True)
sys.stdin.read()
